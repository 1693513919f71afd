// The scale control of a group's page: a whole number from 0, sent as POST /group/{id}/rescale/{scale}; the
// service bounds it (MAX_GROUP_SCALE, the cluster's quota) and its refusal shows under the control.
import { useState } from 'preact/hooks';
import { post } from '../api';
import type { Group } from '../types';
import { Button, errorText, notify } from '../ui';
import { wholeError } from './groups-form';

export function ScaleControl({ g, onDone }: { g: Group; onDone: () => void }) {
  const [value, setValue] = useState(String(g.scale));
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const send = async (e: Event) => {
    e.preventDefault();
    const bad = wholeError(value, 0) ?? (value.trim() ? undefined : 'give a whole number from 0');
    setError(bad);
    if (bad) return;
    setBusy(true);
    try {
      await post(`/group/${g.id}/rescale/${Number(value)}`);
      notify(`Scale set to ${Number(value)}`);
      onDone();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="scale" onSubmit={send} noValidate aria-label="Change the scale">
      <label for="group-scale" class="field-label">
        Scale
      </label>
      <input
        id="group-scale"
        type="number"
        min={0}
        step={1}
        inputMode="numeric"
        value={value}
        aria-invalid={!!error}
        aria-describedby="group-scale-error"
        onInput={(e) => setValue(e.currentTarget.value)}
      />
      <Button type="submit" busy={busy} disabled={value === String(g.scale)}>
        Rescale
      </Button>
      <span id="group-scale-error" class="field-hint error-text" role={error ? 'alert' : undefined}>
        {error}
      </span>
    </form>
  );
}
