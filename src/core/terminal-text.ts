// How a peer's text appears on a terminal: the CLI's human-readable reports (probe, emulate).

/**
 * Characters a terminal does not print as themselves: the C0 controls (ESC, CR, BEL, … tab and
 * line feed included, since a report line is one line), DEL, the C1 controls (U+009B is a
 * one-character CSI on some terminals) and the bidirectional formatting characters, which
 * reorder what follows them on the line.
 * @see ECMA-48 §5 (control functions), Unicode UAX #9 §2 (explicit directional formatting), CVE-2021-42574
 */
// eslint-disable-next-line no-control-regex -- the controls are what this escapes
const NOT_SHOWN_AS_ITSELF = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` as one terminal line shows it: each character of {@link NOT_SHOWN_AS_ITSELF} written as
 * an escape (`\x1b`, `\u202e`), everything else unchanged. A server's answer, name or error text
 * printed as it came could move the cursor, erase or rewrite a line (a forged `verdict:`), retitle
 * the window, or reverse the text after it; escaped, it reads as what was sent.
 * @param text any string (a line of a report; a peer's excerpt or name in it).
 * @returns the same text, with at most 6 characters for each one escaped.
 */
export function terminalLine(text: string): string {
  return text.replace(NOT_SHOWN_AS_ITSELF, (c) => {
    const n = c.charCodeAt(0);
    return n <= 0xff ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;
  });
}
