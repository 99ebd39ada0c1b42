export function UsagePage(_props: { projectId?: string | undefined; runId?: string | undefined }) {
  return <h1 tabIndex={-1}>Usage</h1>;
}
