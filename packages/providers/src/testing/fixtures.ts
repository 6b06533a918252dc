import { readFileSync } from 'node:fs'

/**
 * Reads a recorded stream in the `*.chunks.txt` format: one event's `data:` payload per line,
 * blank lines ignored, bytes kept exactly as recorded (never re-serialised).
 */
export function readChunksFile(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
}
