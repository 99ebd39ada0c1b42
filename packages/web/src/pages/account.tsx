export function AccountPage(_props: { projectId?: string | undefined; runId?: string | undefined }) {
  return <h1 tabIndex={-1}>Account</h1>;
}
