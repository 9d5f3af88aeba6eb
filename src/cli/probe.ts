// `switchyard probe URL`: prints each step of the era probe and the verdict.

import { probeUrl, type ProbeVerdict } from '../upstreams/probe.js';
import { parseHeaderArgs } from './headers.js';

export { parseHeaderArgs } from './headers.js';
import { VERSION } from '../version.js';
import { eraClients } from '../gateway.js';
import { textOf } from '../core/message.js';

/** Renders a verdict for people. */
export function formatVerdict(v: ProbeVerdict): string {
  const lines: string[] = [];
  v.steps.forEach((s, i) => {
    lines.push(`${i + 1}. ${s.request}`);
    if (s.status !== undefined) lines.push(`   → HTTP ${s.status}${s.excerpt ? `  ${s.excerpt}` : ''}`);
    if (s.error) lines.push(`   → error: ${s.error}`);
    if (s.note) lines.push(`   ${s.note}`);
  });
  if (v.ok) {
    lines.push(`verdict: ${v.era} over ${v.transport}${v.endpoint ? ` (endpoint ${v.endpoint})` : ''}`);
    if (v.serverInfo) lines.push(`server: ${textOf(v.serverInfo.name)} ${textOf(v.serverInfo.version)}`.trimEnd());
    if (v.capabilities) lines.push(`capabilities: ${Object.keys(v.capabilities).join(', ') || '(none)'}`);
  } else lines.push(`verdict: no era found: ${v.reason}`);
  return lines.join('\n') + '\n';
}

/**
 * Runs the probe and prints it (`--json`: the verdict object). stdout only; exit code 0 when an
 * era was found, 1 otherwise.
 */
export async function runProbe(url: string, opts: { json?: boolean; header?: string[]; timeoutMs?: number }): Promise<number> {
  const verdict = await probeUrl(url, eraClients(), {
    headers: parseHeaderArgs(opts.header ?? []),
    timeoutMs: opts.timeoutMs,
    clientInfo: { name: 'switchyard-probe', version: VERSION },
  });
  process.stdout.write(opts.json ? JSON.stringify(verdict, null, 2) + '\n' : formatVerdict(verdict));
  return verdict.ok ? 0 : 1;
}
