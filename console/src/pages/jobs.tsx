// Placeholder until this page is written.
import type { PageProps } from '../router';
import { PageHeader } from '../ui';

export function JobsPage(_: PageProps) {
  return <PageHeader title="JobsPage" />;
}

export function JobPage(_: PageProps) {
  return <PageHeader title="JobPage" />;
}

export function SubmitJobPage(_: PageProps) {
  return <PageHeader title="SubmitJobPage" />;
}
