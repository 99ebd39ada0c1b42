export function WorkflowsPage(_props: { projectId?: string | undefined; runId?: string | undefined }) {
  return <h1 tabIndex={-1}>Workflows</h1>;
}
