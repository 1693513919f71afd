// Placeholder until this page is written.
import type { PageProps } from '../router';
import { PageHeader } from '../ui';

export function SqlPage(_: PageProps) {
  return <PageHeader title="SqlPage" />;
}

export function NotebookPage(_: PageProps) {
  return <PageHeader title="NotebookPage" />;
}
