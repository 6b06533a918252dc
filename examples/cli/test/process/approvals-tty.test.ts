import { existsSync, readFileSync, realpathSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, test } from 'vitest'
import { APPROVAL_QUESTION } from '../../src/approvals/decide.js'
import { KODE, offlineEnv, tempDir } from './run-kode.js'
import { ensureTmux, TmuxSession } from './tmux.js'

/** A shell command that runs `kode <args>` in `dir` on a real terminal, then says how it exited. */
function kodeIn(dir: string, args: string): string {
  const env = offlineEnv()
  const vars = ['PATH', 'HOME', 'XDG_CONFIG_HOME']
    .map((name) => `${name}=${JSON.stringify(env[name] ?? '')}`)
    .join(' ')
  // The shell stays a while after kode exits, so the screen can still be read.
  return `cd ${JSON.stringify(dir)} && env -i ${vars} LANG=C.UTF-8 TERM=xterm-256color node ${JSON.stringify(KODE)} ${args}; echo "EXIT=$?"; sleep 60`
}

/** A colour or attribute (SGR) escape sequence. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching escape sequences is the point
const SGR = /\u001b\[[0-9;]*m/
/** `shown` (a shown escape such as `\u200b`) in reverse video: SGR 7 on before it, a sequence after. */
const inReverseVideo = (shown: string) =>
  new RegExp(`\u001b\\[[0-9;]*\\b7m${shown.replace(/\\/g, '\\\\')}\u001b\\[`)

// Approval asked on a real terminal (tmux gives kode a pty): the user types the answer.
describe('asking for approval on a terminal', () => {
  let tmux: TmuxSession | undefined
  let dir: string

  beforeAll(() => ensureTmux())
  afterEach(() => tmux?.kill())

  /** Types `line` and waits for `done` to show after it. */
  async function answer(line: string, done: string) {
    tmux!.send(line, 'Enter')
    await tmux!.waitForText(done)
  }

  test('in the REPL: y approves, a reason denies with it, a approves the tool for the session', async () => {
    dir = realpathSync(tempDir('kode-approve-tty-'))
    tmux = new TmuxSession('kode-approve-repl', kodeIn(dir, ''))
    await tmux.waitForText('Ctrl-C twice to exit')

    await answer('write notes.txt', APPROVAL_QUESTION)
    expect(tmux.screen()).toContain('write_file notes.txt (1 lines):')
    expect(tmux.screen()).toContain('│ Hello from kode.')
    await answer('y', 'write_file answered: Created notes.txt')
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('Hello from kode.\n')

    await answer('run `echo hi > hi.txt`', '$ echo hi > hi.txt')
    await answer('not in this folder', 'bash answered: denied by the user: not in this folder')
    expect(existsSync(join(dir, 'hi.txt'))).toBe(false)

    await answer('write a.txt', 'write_file a.txt (1 lines):')
    await answer('a', 'write_file answered: Created a.txt')
    await answer('write b.txt', 'write_file answered: Created b.txt')
    expect(tmux.screen()).toContain('write_file: approved (you allowed every call of it this session)')
    expect(existsSync(join(dir, 'b.txt'))).toBe(true)
  })

  test('in the REPL: a character the terminal shows as nothing is shown as a marked escape', async () => {
    dir = realpathSync(tempDir('kode-approve-tty-'))
    tmux = new TmuxSession('kode-approve-repl-hidden', kodeIn(dir, ''))
    await tmux.waitForText('Ctrl-C twice to exit')
    await answer('run `echo a\u2060b > ran.txt`', APPROVAL_QUESTION)
    expect(tmux.screen()).toContain('$ echo a\\u2060b > ran.txt')
    expect(tmux.screen()).not.toContain('[7m')
    await answer('n', 'bash answered: denied by the user')
    expect(existsSync(join(dir, 'ran.txt'))).toBe(false)
  })

  test('in the REPL: Ctrl-C at the question leaves the call pending, and the next message denies it', async () => {
    dir = realpathSync(tempDir('kode-approve-tty-'))
    tmux = new TmuxSession('kode-approve-cc', kodeIn(dir, ''))
    await tmux.waitForText('Ctrl-C twice to exit')
    await answer('write late.txt', APPROVAL_QUESTION)
    tmux.send('C-c')
    await tmux.waitForText('Not decided: the calls stay pending, and your next message denies them.')
    await answer('hello', "I am Kode's")
    expect(existsSync(join(dir, 'late.txt'))).toBe(false)
  })

  test('in the REPL: Ctrl-D at the question leaves the call pending and exits, as at the prompt', async () => {
    dir = realpathSync(tempDir('kode-approve-tty-'))
    tmux = new TmuxSession('kode-approve-cd', kodeIn(dir, ''))
    await tmux.waitForText('Ctrl-C twice to exit')
    await answer('write late.txt', APPROVAL_QUESTION)
    // End of input answers the question with nothing, and leaves nothing to read the next prompt from.
    tmux.send('C-d')
    await tmux.waitForText('EXIT=0')
    expect(tmux.screen()).toContain('Not decided: the calls stay pending')
    expect(existsSync(join(dir, 'late.txt'))).toBe(false)
  })

  test('kode exec on a terminal asks too, and y lets the command run', async () => {
    dir = realpathSync(tempDir('kode-approve-tty-'))
    tmux = new TmuxSession('kode-approve-exec', kodeIn(dir, 'exec "run \\`echo ran > ran.txt\\`"'))
    await tmux.waitForText(APPROVAL_QUESTION)
    await answer('y', 'EXIT=0')
    expect(tmux.screen()).toContain('bash answered: (no output)')
    expect(readFileSync(join(dir, 'ran.txt'), 'utf8')).toBe('ran\n')
  })

  test('kode exec with stdout in a file still marks the escapes of the question it asks on the terminal', async () => {
    dir = realpathSync(tempDir('kode-approve-tty-'))
    const command = kodeIn(dir, 'exec "run \\`echo a\u200bb > ran.txt\\`" > answer.txt')
    tmux = new TmuxSession('kode-approve-stdout-file', command)
    await tmux.waitForText(APPROVAL_QUESTION)
    // The question goes to stderr, a terminal: in colour, so the escape is marked, not doubled.
    expect(tmux.screen()).toContain('$ echo a\\u200bb > ran.txt')
    expect(tmux.styledScreen()).toMatch(inReverseVideo('\\u200b'))
    await answer('n', 'EXIT=')
    expect(existsSync(join(dir, 'ran.txt'))).toBe(false)
  })

  test('kode exec with stderr in a file writes the question there without colour, its escapes unmarked', async () => {
    dir = realpathSync(tempDir('kode-approve-tty-'))
    const command = kodeIn(dir, 'exec "run \\`echo a\u200bb > ran.txt\\`" 2> question.txt')
    tmux = new TmuxSession('kode-approve-stderr-file', command)
    const question = () =>
      existsSync(join(dir, 'question.txt')) ? readFileSync(join(dir, 'question.txt'), 'utf8') : ''
    await tmux.waitFor('the question in question.txt', () => question().includes(APPROVAL_QUESTION))
    // Without colour a shown escape is told apart by the doubled backslashes of the model's own.
    expect(question()).toContain('$ echo a\\u200bb > ran.txt')
    expect(question()).not.toMatch(SGR)
    await answer('n', 'EXIT=')
    expect(existsSync(join(dir, 'ran.txt'))).toBe(false)
  })

  test('the braille blank, a tab and a private-use character are shown as escapes in reverse video', async () => {
    dir = realpathSync(tempDir('kode-approve-tty-'))
    tmux = new TmuxSession(
      'kode-approve-blank',
      kodeIn(dir, 'exec "run \\`echo a\u2800b\tc\ue000 > ran.txt\\`"'),
    )
    await tmux.waitForText(APPROVAL_QUESTION)
    expect(tmux.screen()).toContain('$ echo a\\u2800b\\tc\\ue000 > ran.txt')
    // Each escape reaches the real terminal in reverse video (SGR 7).
    const styled = tmux.styledScreen()
    for (const shown of ['\\u2800', '\\t', '\\ue000']) expect(styled).toMatch(inReverseVideo(shown))
    await answer('n', 'EXIT=')
    expect(existsSync(join(dir, 'ran.txt'))).toBe(false)
  })

  test('a character the terminal shows as nothing is shown as a marked escape, and n denies the call', async () => {
    dir = realpathSync(tempDir('kode-approve-tty-'))
    // A zero-width space inside the command: invisible if written as it is.
    tmux = new TmuxSession('kode-approve-hidden', kodeIn(dir, 'exec "run \\`echo a\u200bb > ran.txt\\`"'))
    await tmux.waitForText(APPROVAL_QUESTION)
    const screen = tmux.screen()
    expect(screen).toContain('$ echo a\\u200bb > ran.txt')
    expect(screen).not.toContain('\u200b')
    // The escape is marked in reverse video: the mark reaches the terminal whole, not stripped to `[7m`.
    expect(screen).not.toContain('[7m')
    await answer('n', 'EXIT=')
    expect(existsSync(join(dir, 'ran.txt'))).toBe(false)
  })
})
