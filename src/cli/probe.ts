// `switchyard probe URL`: prints each step of the era probe and the verdict.

import { probeUrl, type ProbeVerdict } from '../upstreams/probe.js';
import { parseHeaderArgs } from './headers.js';

export { parseHeaderArgs } from './headers.js';
import { SwitchyardError } from '../core/errors.js';
import { VERSION } from '../version.js';
import { eraClients } from '../gateway.js';
import { textOf } from '../core/message.js';
import { terminalLine } from '../core/terminal-text.js';
import { argForDisplay, urlForReport } from '../core/url-text.js';

/**
 * Checks the probe's command line before anything is sent: the URL must be an absolute http(s)
 * URL, and each `--header` a `K:V` pair with a valid field name and value. These are usage
 * errors: retrying them cannot help, and "no era found" would read as a verdict on the server.
 * @param url the URL argument.
 * @param header the `--header` arguments.
 * @returns the headers to send, names lower-cased.
 * @throws SwitchyardError SWY_ERR_CLI_USAGE naming the bad URL or header
 * @see RFC 9110 §4.2 (http and https URIs), §5.1 (field names), §5.5 (field values)
 */
export function checkProbeArgs(url: string, header: readonly string[]): Record<string, string> {
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    throw new SwitchyardError('SWY_ERR_CLI_USAGE', { detail: `not a URL: ${argForDisplay(url)}` });
  }
  if (protocol !== 'http:' && protocol !== 'https:') throw new SwitchyardError('SWY_ERR_CLI_USAGE', { detail: `not an http(s) URL: ${argForDisplay(url)}` });
  try {
    return parseHeaderArgs(header);
  } catch (err) {
    throw new SwitchyardError('SWY_ERR_CLI_USAGE', { detail: (err as Error).message });
  }
}

/**
 * Renders a verdict for people: one step per numbered line, then the verdict lines. What the
 * server sent (excerpts, its name and version, its reasons) is shown with control and
 * bidirectional characters escaped ({@link terminalLine}), so it cannot rewrite the report.
 * @returns lines ending in `\n`.
 */
export function formatVerdict(v: ProbeVerdict): string {
  const lines: string[] = [];
  v.steps.forEach((s, i) => {
    lines.push(`${i + 1}. ${s.request}`);
    if (s.status !== undefined) lines.push(`   → HTTP ${s.status}${s.excerpt ? `  ${s.excerpt}` : ''}`);
    // HTTP+SSE: the reply came on the stream, not in the POST's answer whose status is above.
    if (s.streamReply) lines.push(`   reply on the stream: ${s.streamReply}`);
    if (s.error) lines.push(`   → error: ${s.error}`);
    if (s.note) lines.push(`   ${s.note}`);
  });
  if (v.ok) {
    lines.push(`verdict: ${v.era} over ${v.transport}${v.endpoint ? ` (endpoint ${v.endpoint})` : ''}`);
    // What a gateway in front acts on (docs/upstreams.md, "Which era auto picks").
    if (v.alsoSessions)
      lines.push(
        `also: ${v.alsoSessions} sessions over streamable-http on the same URL (dual-era): a gateway with era auto speaks ${v.alsoSessions}, match-client both`,
      );
    if (v.serverInfo) lines.push(`server: ${textOf(v.serverInfo.name)} ${textOf(v.serverInfo.version)}`.trimEnd());
    if (v.capabilities) lines.push(`capabilities: ${Object.keys(v.capabilities).join(', ') || '(none)'}`);
    for (const w of v.warnings ?? []) lines.push(`warning: ${w}`);
  } else lines.push(`verdict: no era found: ${v.reason}`);
  return lines.map(terminalLine).join('\n') + '\n';
}

/**
 * Runs the probe and prints it (`--json`: the verdict object). stdout only; exit code 0 when an
 * era was found, 1 otherwise. `headers` are sent as given (see `checkProbeArgs`).
 */
export async function runProbe(url: string, opts: { json?: boolean; headers?: Record<string, string>; timeoutMs?: number }): Promise<number> {
  const verdict = await probeUrl(url, await eraClients(), {
    headers: opts.headers ?? {},
    timeoutMs: opts.timeoutMs,
    clientInfo: { name: 'switchyard-probe', version: VERSION },
    credentialsHint: 'pass --header Authorization:…',
  });
  // The URLs as a report shows them: no userinfo or credential query values (urlForReport).
  const shown = { ...verdict, url: urlForReport(verdict.url), ...(verdict.endpoint !== undefined ? { endpoint: urlForReport(verdict.endpoint) } : {}) };
  process.stdout.write(opts.json ? JSON.stringify(shown, null, 2) + '\n' : formatVerdict(verdict));
  return verdict.ok ? 0 : 1;
}
