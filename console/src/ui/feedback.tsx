// What a page says about itself: loading, errors, empty lists, and toasts after an action.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { errorText } from './data';

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p class="muted" role="status" aria-live="polite">
      {what}…
    </p>
  );
}

export function ErrorBox({ error }: { error?: string }) {
  if (!error) return null;
  return (
    <div class="error-box" role="alert">
      {error}
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty muted">{children}</p>;
}

type Toast = { id: number; text: string; kind: 'ok' | 'error' };
let toastListener: ((t: Toast) => void) | undefined;
let toastSeq = 0;

/** Shows a short message at the bottom of the screen: the result of an action. */
export function notify(text: string, kind: 'ok' | 'error' = 'ok'): void {
  toastListener?.({ id: ++toastSeq, text, kind });
}

export function Toasts() {
  const [toasts, setToasts] = useState<Toast[]>([]);
  useEffect(() => {
    toastListener = (t) => {
      setToasts((all) => [...all.slice(-3), t]);
      setTimeout(() => setToasts((all) => all.filter((x) => x.id !== t.id)), t.kind === 'error' ? 8000 : 4000);
    };
    return () => (toastListener = undefined);
  }, []);
  return (
    <div class="toasts" role="status" aria-live="polite">
      {toasts.map((t) => (
        <div key={t.id} class={`toast toast-${t.kind}`}>
          {t.text}
        </div>
      ))}
    </div>
  );
}

/** Runs an action, toasts its outcome, and returns whether it succeeded. */
export async function act(what: string, fn: () => Promise<unknown>): Promise<boolean> {
  try {
    await fn();
    notify(what);
    return true;
  } catch (err) {
    notify(errorText(err), 'error');
    return false;
  }
}
