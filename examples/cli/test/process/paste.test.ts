import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { isMessage, joinText } from '@kode/protocol'
import { createFileSessionStore } from '@kode/session/file'
import { afterAll, describe, expect, test } from 'vitest'
import { KODE, offlineEnv, tempDir } from './run-kode.js'
import { ensureTmux, TmuxSession } from './tmux.js'

// A block of text pasted at the REPL's prompt (a stack trace, a code snippet) is one prompt.
describe('pasting several lines into the REPL', () => {
  const dir = tempDir('kode-paste-')
  const sessions = join(dir, 'sessions')
  let tmux: TmuxSession | undefined

  afterAll(() => tmux?.kill())

  test('is one prompt with its line breaks, sent with Enter', async () => {
    ensureTmux()
    const env = offlineEnv()
    const vars = ['PATH', 'HOME', 'XDG_CONFIG_HOME']
      .map((name) => `${name}=${JSON.stringify(env[name] ?? '')}`)
      .join(' ')
    const command = `cd ${JSON.stringify(dir)} && env -i ${vars} LANG=C.UTF-8 TERM=xterm-256color node ${JSON.stringify(KODE)} --sessions-dir ${JSON.stringify(sessions)}`
    const session = new TmuxSession('kode-paste-test', command)
    tmux = session
    await session.waitForText('Ctrl-C twice to exit')
    const pasted = 'why does this fail:\nError: boom\n    at foo (a.js:1)'
    session.paste(pasted)
    session.send('Enter')
    await session.waitForText('■ Done')
    session.send('C-d')
    await session.waitFor('kode to exit', () => !session.running())

    const [id] = readdirSync(sessions)
    const store = createFileSessionStore({ dir: sessions })
    try {
      const prompts = (await store.read(id!)).flatMap((record) =>
        isMessage(record) && record.role === 'user' ? [joinText(record.parts)] : [],
      )
      expect(prompts).toEqual([pasted])
    } finally {
      await store.close()
    }
  })
})
