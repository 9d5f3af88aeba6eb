// The package version, read once from package.json.

import { readFileSync } from 'node:fs';

/** Switchyard's version (package.json `version`). */
export const VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
