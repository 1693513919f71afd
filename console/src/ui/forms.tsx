// Actions and forms: buttons (one that asks first), labelled fields with the service's validation error.
import type { ComponentChildren, JSX } from 'preact';
import { useState } from 'preact/hooks';

type ButtonProps = JSX.HTMLAttributes<HTMLButtonElement> & {
  variant?: 'primary' | 'danger' | 'plain';
  busy?: boolean;
  type?: 'button' | 'submit';
  disabled?: boolean;
};

export function Button({ variant = 'plain', busy, children, disabled, type = 'button', ...rest }: ButtonProps) {
  return (
    <button {...rest} type={type} class={`btn btn-${variant} ${rest.class ?? ''}`} disabled={disabled || busy}>
      {busy ? '…' : children}
    </button>
  );
}

/**
 * A destructive action in two steps: the first click asks, the second (on "Yes") acts. Keyboard: Escape or
 * "No" backs out. Hidden when `hidden` (e.g. the user's role may not do it).
 */
export function ConfirmButton({
  label,
  question,
  onConfirm,
  variant = 'danger',
  hidden,
}: {
  label: string;
  question: string;
  onConfirm: () => Promise<unknown> | void;
  variant?: 'danger' | 'primary' | 'plain';
  hidden?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  if (hidden) return null;
  if (!asking)
    return (
      <Button variant={variant} onClick={() => setAsking(true)}>
        {label}
      </Button>
    );
  return (
    <span class="confirm" role="group" aria-label={question} onKeyDown={(e) => e.key === 'Escape' && setAsking(false)}>
      <span>{question}</span>
      <Button
        variant={variant}
        busy={busy}
        autoFocus
        onClick={async () => {
          setBusy(true);
          try {
            await onConfirm();
          } finally {
            setBusy(false);
            setAsking(false);
          }
        }}
      >
        Yes, {label.toLowerCase()}
      </Button>
      <Button onClick={() => setAsking(false)}>No</Button>
    </span>
  );
}

/** A labelled form control with an optional hint and the validation error the service gave for it. */
export function Field({
  label,
  hint,
  error,
  children,
}: {
  label: string;
  hint?: string;
  error?: string;
  children: ComponentChildren;
}) {
  // The hint and error sit beside the label, not in it: the control's accessible name is the label alone.
  return (
    <div class={`field ${error ? 'field-error' : ''}`}>
      <label class="field-control">
        <span class="field-label">{label}</span>
        {children}
      </label>
      {hint && !error && <span class="field-hint">{hint}</span>}
      {error && <span class="field-hint error-text">{error}</span>}
    </div>
  );
}
