// Page layout: a header, a live-stream dot, tabs, a dialog, a block of JSON or text.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { Button } from './forms';

export function PageHeader({
  title,
  children,
  live,
}: {
  title: ComponentChildren;
  children?: ComponentChildren;
  /** Shows whether the page's stream is connected. */
  live?: boolean;
}) {
  return (
    <header class="page-header">
      <h1>
        {title}
        {live !== undefined && <LiveDot connected={live} />}
      </h1>
      {children && <div class="actions">{children}</div>}
    </header>
  );
}

export function LiveDot({ connected }: { connected: boolean }) {
  return (
    <span class={`live ${connected ? 'live-on' : 'live-off'}`} title={connected ? 'live' : 'not live: reconnecting'}>
      <span class="sr-only">{connected ? 'live' : 'not live'}</span>
    </span>
  );
}

export function Tabs<K extends string>({
  tabs,
  active,
  onChange,
}: {
  tabs: { key: K; label: string }[];
  active: K;
  onChange: (k: K) => void;
}) {
  return (
    <div class="tabs" role="tablist">
      {tabs.map((t) => (
        <button
          key={t.key}
          type="button"
          role="tab"
          aria-selected={t.key === active}
          class={t.key === active ? 'tab tab-active' : 'tab'}
          onClick={() => onChange(t.key)}
        >
          {t.label}
        </button>
      ))}
    </div>
  );
}

/** A modal dialog (the platform's <dialog>: focus is trapped, Escape closes). */
export function Dialog({
  open,
  title,
  onClose,
  children,
}: {
  open: boolean;
  title: string;
  onClose: () => void;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={ref} onClose={onClose} aria-label={title}>
      <header class="dialog-header">
        <h2>{title}</h2>
        <Button onClick={onClose} aria-label="close">
          ×
        </Button>
      </header>
      {open && children}
    </dialog>
  );
}

/** Pretty JSON or text in a scrollable block. */
export function Pre({ value, label }: { value: unknown; label?: string }) {
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  return (
    <pre class="pre" aria-label={label} tabIndex={0}>
      {text}
    </pre>
  );
}
