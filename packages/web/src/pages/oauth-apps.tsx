export function OAuthAppsPage(_props: { projectId?: string | undefined; runId?: string | undefined }) {
  return <h1 tabIndex={-1}>OAuth apps</h1>;
}
