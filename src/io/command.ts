// Command lines as a POSIX shell splits them (without running a shell): for `--stdio "CMD ARGS"`.

import { SwitchyardError } from '../core/errors.js';

/**
 * Splits a command line into argv: whitespace separates words; single quotes keep text
 * literally; double quotes keep whitespace and allow `\"`; a backslash escapes one character.
 * @throws SwitchyardError SWY_ERR_CLI_USAGE on an unterminated quote or an empty command
 */
export function splitCommand(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let has = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote === "'") {
      if (c === "'") quote = null;
      else cur += c;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1])) cur += line[++i];
      else cur += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      has = true;
    } else if (c === '\\' && i + 1 < line.length) {
      cur += line[++i];
      has = true;
    } else if (/\s/.test(c)) {
      if (has || cur) out.push(cur);
      cur = '';
      has = false;
    } else {
      cur += c;
    }
  }
  if (quote) throw new SwitchyardError('SWY_ERR_CLI_USAGE', { detail: 'unterminated quote in --stdio command' });
  if (has || cur) out.push(cur);
  if (out.length === 0) throw new SwitchyardError('SWY_ERR_CLI_USAGE', { detail: 'empty --stdio command' });
  return out;
}
