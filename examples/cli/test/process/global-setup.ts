import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** Builds `dist/kode.js` once before the tests that run the binary (about a second). */
export default function setup(): void {
  const cli = fileURLToPath(new URL('../..', import.meta.url))
  execFileSync('pnpm', ['run', 'build'], { cwd: cli, stdio: 'pipe' })
}
