import { execFile } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { API_KEY_ENV } from '../../src/provider.js'

/** The built binary and the repository root (the workspace the demo tours). */
export const KODE = fileURLToPath(new URL('../../dist/kode.js', import.meta.url))
export const REPO = fileURLToPath(new URL('../../../..', import.meta.url))

/**
 * The environment without any provider key, so every run is offline whatever the machine has,
 * and without the user's config file (one naming a provider would make a keyless run an error).
 */
export function offlineEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', XDG_CONFIG_HOME: tempDir('kode-xdg-') }
  for (const name of [...Object.values(API_KEY_ENV), 'FORCE_COLOR']) delete env[name]
  return env
}

/** A fresh directory for a test's sessions. */
export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

/**
 * Runs `kode` with `args` in the repository (or `cwd`), offline unless `env` adds a key, its
 * stdin not a terminal: a pipe that stays open, or that gives `input` and ends (a piped REPL);
 * resolves with its exit code and output.
 */
export function runKode(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  cwd = REPO,
  input?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const options = { cwd, env: { ...offlineEnv(), ...env }, maxBuffer: 64 * 1024 * 1024 }
  return new Promise((resolve) => {
    const child = execFile('node', [KODE, ...args], options, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0
      // A child that could not run (spawn failed, output too large) says why where a test looks.
      const why = error && typeof error.code !== 'number' ? `\n[runKode: ${error.message}]` : ''
      resolve({ code, stdout, stderr: stderr + why })
    })
    if (input !== undefined) child.stdin?.end(input)
  })
}
