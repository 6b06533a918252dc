import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Interpreter } from './interpreters.js'

/** Limits of one program run. */
export interface SandboxLimits {
  /** Wall-clock limit; the program's process group is killed when it passes. */
  timeoutMs: number
  /** Bytes of output (stdout and stderr together) kept; the program is killed when it writes more. */
  outputLimit: number
  /** Kills the program when it aborts (the user interrupted, the tool call timed out). */
  signal?: AbortSignal
}

/** How a program run ended. */
export interface SandboxResult {
  /** stdout and stderr, interleaved as they arrived, at most `outputLimit` bytes. */
  output: string
  /** The exit code, or `null` when the process was killed. */
  exitCode: number | null
  /** The signal that ended the process (`SIGKILL` when a limit stopped it), else `null`. */
  exitSignal: NodeJS.Signals | null
  timedOut: boolean
  /** The output passed `outputLimit` (and the program was stopped). */
  truncated: boolean
  /** The run was stopped because `signal` aborted. */
  aborted: boolean
}

/**
 * Runs `code` with `interpreter` in a child process: in a fresh temporary directory (its working
 * directory, removed afterwards), with an environment of `PATH`, a `HOME` and `TMPDIR` inside
 * that directory and `LANG` and nothing else (no keys or tokens of the host reach it), stdin
 * closed, in a process group of its own so that what it starts is killed with it (unless it leaves
 * the group: a daemon outlives the run). This limits mistakes; it is not a security boundary (see
 * the interpreters for what each can reach).
 */
export async function runInSandbox(
  interpreter: Interpreter,
  code: string,
  limits: SandboxLimits,
): Promise<SandboxResult> {
  const dir = await mkdtemp(join(tmpdir(), 'kode-codeact-'))
  try {
    await writeFile(join(dir, interpreter.file), code)
    return await runProcess(interpreter, dir, limits)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** How long the pipes stay open after the program exited, for its last output to be read. */
const EXIT_GRACE_MS = 200

function runProcess(interpreter: Interpreter, dir: string, limits: SandboxLimits): Promise<SandboxResult> {
  const { command, args } = interpreter.command(dir)
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', HOME: dir, TMPDIR: dir, LANG: 'C.UTF-8' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: process.platform !== 'win32',
    })
    const chunks: Buffer[] = []
    let bytes = 0
    const result = { timedOut: false, truncated: false, aborted: false }
    const kill = () => {
      try {
        if (child.pid !== undefined && process.platform !== 'win32') process.kill(-child.pid, 'SIGKILL')
        else child.kill('SIGKILL')
      } catch {
        // Already gone.
      }
    }
    const collect = (chunk: Buffer) => {
      if (result.truncated) return
      const room = limits.outputLimit - bytes
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room))
        bytes = limits.outputLimit
        result.truncated = true
        kill()
        return
      }
      chunks.push(chunk)
      bytes += chunk.length
    }
    child.stdout.on('data', collect)
    child.stderr.on('data', collect)
    const timer = setTimeout(() => {
      result.timedOut = true
      kill()
    }, limits.timeoutMs)
    const onAbort = () => {
      result.aborted = true
      kill()
    }
    if (limits.signal?.aborted) onAbort()
    else limits.signal?.addEventListener('abort', onAbort, { once: true })
    // The limits are kept by this process: one that exits first (`process.exit`) would leave the
    // program running in its own group for ever, its directory never removed. A host killed by a
    // signal cannot do this; see the README.
    process.once('exit', kill)
    let settled = false
    // A process that fails to start emits `error` and may still emit `close`: the first one counts.
    const finish = (exitCode: number | null, exitSignal: NodeJS.Signals | null, spawnError?: Error) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      limits.signal?.removeEventListener('abort', onAbort)
      process.removeListener('exit', kill)
      const bytes = Buffer.concat(chunks)
      let output = (result.truncated ? wholeCharacters(bytes) : bytes).toString('utf8')
      if (spawnError) output += `${output ? '\n' : ''}Could not start ${command}: ${spawnError.message}`
      resolve({ output, exitCode, exitSignal, ...result })
    }
    child.on('error', (error) => finish(null, null, error))
    child.on('close', (exitCode, exitSignal) => finish(exitCode, exitSignal))
    // A process the program started may outlive it with the program's stdout open (one that left
    // the process group escapes the kill): `close` would wait for it. Once the program has exited,
    // what is left of its group is killed, and after a moment for its own last output to be read,
    // the pipes are closed.
    child.on('exit', () => {
      kill()
      const grace = setTimeout(() => {
        child.stdout.destroy()
        child.stderr.destroy()
      }, EXIT_GRACE_MS)
      child.once('close', () => clearTimeout(grace))
    })
  })
}

/**
 * `bytes` without a UTF-8 character the output limit cut in half at its end, which would decode
 * to a replacement character (3 bytes, past the limit) rather than be left out.
 */
function wholeCharacters(bytes: Buffer): Buffer {
  // The start of the last character: at most 3 continuation bytes (10xxxxxx) back.
  let start = bytes.length - 1
  while (start > 0 && bytes.length - start < 4 && (bytes[start]! & 0xc0) === 0x80) start--
  const lead = bytes[start]
  if (lead === undefined) return bytes
  const size = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1
  return bytes.length - start < size ? bytes.subarray(0, start) : bytes
}
