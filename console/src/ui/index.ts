// The console's small component kit, shared by every page: loading and error states, state badges, times,
// buttons that confirm, form fields, sortable tables, a pager, toasts, tabs and a dialog, one file a topic.
// Styles: styles.css.
export * from './data';
export * from './feedback';
export * from './values';
export * from './forms';
export * from './lists';
export * from './list-page';
export * from './layout';
