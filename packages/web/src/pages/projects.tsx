export function ProjectsPage(_props: { projectId?: string | undefined; runId?: string | undefined }) {
  return <h1 tabIndex={-1}>Projects</h1>;
}
