import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { buildSync } from 'esbuild'
import { afterEach, beforeEach, expect, test } from 'vitest'

// The time limit is kept by the host's process. A host that calls process.exit while a program
// runs must not leave the program running on in its own process group.

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kode-codeact-host-'))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

/** Whether `pid` is a live process (a zombie waiting for its reaper is not). */
function alive(pid: number): boolean {
  const stat = `/proc/${pid}/stat`
  if (existsSync(stat)) return !/^\d+ \(.*\) Z/.test(readFileSync(stat, 'utf8'))
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

test('a host that exits while a program runs kills the program', async () => {
  // The sandbox, bundled for a plain Node host process.
  buildSync({
    entryPoints: [join(import.meta.dirname, '../src/sandbox.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile: join(dir, 'sandbox.mjs'),
    logLevel: 'silent',
  })
  const pidFile = join(dir, 'pid')
  // The program (no permission model here, so it can write its pid where the test reads it)
  // spins for ever; the host exits once the program has started. The pid is written aside and
  // renamed into place, so the host never sees the file before the pid is in it.
  const program = `import fs from "node:fs"\nfs.writeFileSync(${JSON.stringify(`${pidFile}.tmp`)}, String(process.pid))\nfs.renameSync(${JSON.stringify(`${pidFile}.tmp`)}, ${JSON.stringify(pidFile)})\nfor (;;) {}`
  writeFileSync(
    join(dir, 'host.mjs'),
    [
      `import { existsSync } from 'node:fs'`,
      `import { runInSandbox } from './sandbox.mjs'`,
      `const node = { file: 'main.mjs', command: () => ({ command: process.execPath, args: ['main.mjs'] }) }`,
      `runInSandbox(node, ${JSON.stringify(program)}, { timeoutMs: 600000, outputLimit: 1000 })`,
      `const wait = setInterval(() => { if (existsSync(${JSON.stringify(pidFile)})) process.exit(0) }, 10)`,
    ].join('\n'),
  )
  await promisify(execFile)(process.execPath, [join(dir, 'host.mjs')], { timeout: 30_000 })
  const pid = Number(readFileSync(pidFile, 'utf8'))
  expect(pid).toBeGreaterThan(0)
  // A SIGKILL sent takes a moment to land: wait for it, for longer than it can take. Without the
  // kill the program spins on, and this waits out the bound.
  try {
    for (let waited = 0; alive(pid) && waited < 10_000; waited += 20) await sleep(20)
    expect(alive(pid)).toBe(false)
  } finally {
    if (alive(pid)) process.kill(pid, 'SIGKILL')
  }
}, 40_000)
