// The typed result of one SQL statement: its state and timing, the engine's message when it failed, and the
// rows under their column names and types. Values are shown exactly as the API sent them (DECIMAL and large
// BIGINT values arrive as strings and stay strings); NULL and the empty string are told apart; numbers are
// right-aligned. The engine's log of the statement folds out below.
import type { SqlColumn, SqlStatementResult } from './sql-common';
import { SqlStateBadge } from './sql-common';
import { ErrorBox, formatDuration } from '../ui';

const NUMERIC = new Set([
  'TINYINT',
  'SMALLINT',
  'INT',
  'INTEGER',
  'BIGINT',
  'FLOAT',
  'REAL',
  'DOUBLE',
  'DECIMAL',
  'NUMERIC',
]);

/** `DECIMAL(38,9)` for decimals, the bare type name otherwise. */
export const typeLabel = (c: SqlColumn): string =>
  c.type === 'DECIMAL' && c.precision > 0 ? `DECIMAL(${c.precision},${c.scale})` : c.type;

/** One value as given: strings untouched, JSON for arrays, maps and structs. */
export function SqlValue({ value }: { value: unknown }) {
  if (value === null || value === undefined) return <span class="sql-null">NULL</span>;
  if (value === '')
    return (
      <span class="sql-empty" title="empty string">
        <span aria-hidden="true">''</span>
        <span class="sr-only">empty string</span>
      </span>
    );
  if (typeof value === 'string') return <>{value}</>;
  if (typeof value === 'number' || typeof value === 'boolean') return <>{String(value)}</>;
  return <code>{JSON.stringify(value)}</code>;
}

export function ResultTable({ result }: { result: SqlStatementResult }) {
  const { columns, rows } = result;
  if (columns.length === 0) return <p class="muted">The statement returned no columns.</p>;
  const numeric = columns.map((c) => NUMERIC.has(c.type));
  return (
    <div class="table-wrap sql-table-wrap">
      <table class="sql-table">
        <caption class="sr-only">Result rows</caption>
        <thead>
          <tr>
            {columns.map((c, i) => (
              <th key={c.index} scope="col" class={numeric[i] ? 'num' : undefined}>
                <span class="sql-col-name">{c.name}</span>
                <span class="sql-col-type">{typeLabel(c)}</span>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr>
              <td colSpan={columns.length} class="muted">
                No rows.
              </td>
            </tr>
          ) : (
            rows.map((row, r) => (
              <tr key={r}>
                {columns.map((c, i) => (
                  <td key={c.index} class={numeric[i] ? 'num' : undefined}>
                    <SqlValue value={row[i]} />
                  </td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}

/** The whole outcome: a summary line, the error or the table, and the log. */
export function ResultView({ result, maxRows }: { result: SqlStatementResult; maxRows?: number }) {
  const { info } = result;
  const took = info.startTime && info.completionTime ? formatDuration(info.completionTime - info.startTime) : '';
  const capped = maxRows !== undefined && result.rows.length >= maxRows;
  return (
    <section class="sql-result" aria-label="Statement result">
      <p class="sql-summary">
        <SqlStateBadge state={info.state} />
        {info.state === 'FINISHED' && (
          <span class="num">
            {result.rows.length} {result.rows.length === 1 ? 'row' : 'rows'}
            {capped ? ' (maxRows reached)' : ''}
          </span>
        )}
        {took && <span class="muted num">{took}</span>}
      </p>
      {info.state !== 'FINISHED' ? (
        <ErrorBox error={info.exception ?? `the statement ended ${info.state}`} />
      ) : (
        <ResultTable result={result} />
      )}
      {result.logs.length > 0 && (
        <details class="sql-logs">
          <summary>Engine log ({result.logs.length} lines)</summary>
          <pre class="pre">{result.logs.join('\n')}</pre>
        </details>
      )}
    </section>
  );
}
