import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** Builds the page (and the server) once: the tests serve `dist/public`. */
export default function setup(): void {
  execFileSync('pnpm', ['run', 'build'], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    stdio: 'pipe',
  })
}
