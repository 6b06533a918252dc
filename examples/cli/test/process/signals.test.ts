import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, test } from 'vitest'
import { APPROVAL_QUESTION } from '../../src/approvals/decide.js'
import { KODE, offlineEnv, tempDir } from './run-kode.js'
import { ensureTmux, TmuxSession } from './tmux.js'

/** Polls until `check` holds; fails when it never does (a hang, not a slow machine). */
async function waitFor(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** Whether a process is still running (or not yet reaped). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
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

  describe('on a real terminal that closes (tmux gone)', () => {
    let tmux: TmuxSession | undefined
    beforeAll(() => ensureTmux())
    afterEach(() => tmux?.kill())

    /** Starts `kode <args>` on a terminal in `dir`, writing its pid and its stderr to files there. */
    function kodeOnTerminal(dir: string, args: string): TmuxSession {
      const env = offlineEnv()
      const vars = ['PATH', 'HOME', 'XDG_CONFIG_HOME', 'NO_COLOR']
        .map((name) => `${name}=${JSON.stringify(env[name] ?? '')}`)
        .join(' ')
      const command = `cd ${JSON.stringify(dir)} && echo $$ > kode.pid && exec env -i ${vars} LANG=C.UTF-8 TERM=xterm-256color node ${JSON.stringify(KODE)} ${args} 2> stderr.txt`
      return new TmuxSession(`kode-hangup-${args.length}`, command)
    }

    async function closeTerminal(dir: string): Promise<string> {
      const pid = Number(readFileSync(join(dir, 'kode.pid'), 'utf8'))
      tmux!.kill()
      await waitFor('kode to end', () => !alive(pid))
      return readFileSync(join(dir, 'stderr.txt'), 'utf8')
    }

    test('the REPL stops the running command and ends without a stack trace', async () => {
      const dir = tempDir('kode-hangup-')
      tmux = kodeOnTerminal(dir, '-y')
      await tmux.waitForText('Ctrl-C twice to exit')
      tmux.send('run `echo $$ > group.txt; sleep 300`', 'Enter')
      const groupFile = join(dir, 'group.txt')
      await waitFor(
        'the command to start',
        () => existsSync(groupFile) && readFileSync(groupFile, 'utf8') !== '',
      )
      const pgid = Number(readFileSync(groupFile, 'utf8'))
      groups.push(pgid)
      const stderr = await closeTerminal(dir)
      await waitFor('the command to be stopped', () => !groupAlive(pgid))
      expect(stderr).toBe('')
    })

    test('kode exec asking for approval ends without a stack trace', async () => {
      const dir = tempDir('kode-hangup-')
      tmux = kodeOnTerminal(dir, 'exec "run \\`ls\\`"')
      // exec asks on stderr, here a file; the answer would come from the terminal.
      const stderrFile = join(dir, 'stderr.txt')
      await waitFor(
        'the question',
        () => existsSync(stderrFile) && readFileSync(stderrFile, 'utf8').includes(APPROVAL_QUESTION),
      )
      const stderr = await closeTerminal(dir)
      expect(stderr).not.toMatch(/Error|Assertion|node:/)
    })
  })
})
