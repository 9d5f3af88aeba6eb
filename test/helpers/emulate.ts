// The client-fallback emulator (src/emulate) in a test: in process, on loopback, cleaned up after.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { startEmulator, type EmulateOptions, type Emulator } from '../../src/emulate/index.js';

/**
 * Starts an emulator on 127.0.0.1 at a port the OS picks, logging nothing, with its request lines
 * (JSON lines, `EmulateOptions.logFile`) in a file of a new temp directory; closes it and removes
 * the directory after the test.
 * @param o the emulator's other options (era, knobs, limits).
 * @returns the emulator and the path of its request lines.
 */
export async function testEmulator(
  t: { after(fn: () => Promise<void>): void },
  o: Omit<EmulateOptions, 'host' | 'port' | 'log' | 'logFile'>,
): Promise<{ emu: Emulator; logFile: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'emulate-'));
  const logFile = path.join(dir, 'requests.jsonl');
  const emu = await startEmulator({ host: '127.0.0.1', port: 0, log: pino({ level: 'silent' }), logFile, ...o });
  t.after(async () => {
    await emu.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { emu, logFile };
}
