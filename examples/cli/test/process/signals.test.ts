import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { KODE, offlineEnv, tempDir } from './run-kode.js'

/** Polls until `check` holds; fails when it never does (a hang, not a slow machine). */
async function waitFor(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** Whether a process group still has a member (a zombie counts until it is reaped). */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}

/** Runs `kode exec -y` on a `bash` command that writes its process group id, then sleeps. */
function execSleeper(dir: string): ChildProcess {
  const prompt = 'run `echo $$ > group.txt; sleep 300`'
  return spawn('node', [KODE, 'exec', '-y', '--sessions-dir', join(dir, 'sessions'), prompt], {
    cwd: dir,
    env: offlineEnv(),
    stdio: 'ignore',
  })
}

describe('a signal that ends kode', () => {
  const groups: number[] = []
  afterEach(() => {
    // A failed run leaves its sleeper behind: stop it here, not in the next test.
    for (const pgid of groups.splice(0)) if (groupAlive(pgid)) process.kill(-pgid, 'SIGKILL')
  })

  // Either way a shell reports 128 + the signal's number. After SIGHUP the terminal is gone, and
  // kode ends by the signal itself (Node 20 cannot restore a hung-up terminal's mode on exit).
  for (const [signal, ending] of [
    ['SIGTERM', 'exit 143'],
    ['SIGHUP', 'killed by SIGHUP'],
  ] as const) {
    test(`${signal} stops the bash command kode ran, and kode ends: ${ending}`, async () => {
      const dir = tempDir('kode-signal-')
      const kode = execSleeper(dir)
      const exited = new Promise<string>((resolve) =>
        kode.once('exit', (code, ended) =>
          resolve(ended === signal ? `killed by ${signal}` : `exit ${code}`),
        ),
      )
      const groupFile = join(dir, 'group.txt')
      await waitFor(
        'the command to start',
        () => existsSync(groupFile) && readFileSync(groupFile, 'utf8') !== '',
      )
      const pgid = Number(readFileSync(groupFile, 'utf8'))
      groups.push(pgid)
      kode.kill(signal)
      const code = await exited
      // Its own process group: no signal reaches it but the one kode sends.
      await waitFor('the command to be stopped', () => !groupAlive(pgid))
      expect(code).toBe(ending)
    })
  }
})
