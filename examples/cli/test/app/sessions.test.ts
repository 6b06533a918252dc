import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { HistoryEvent } from '@kode/protocol'
import { createMemorySessionStore } from '@kode/session'
import { describe, expect, test } from 'vitest'
import { visibleWidth } from '../../src/display/style.js'
import {
  exportSession,
  findSession,
  matchPrefix,
  promptLines,
  resumeCommand,
  sessionLines,
  shelfOf,
} from '../../src/sessions.js'
import { tempDir } from '../process/run-kode.js'

const user = (id: string, text: string): HistoryEvent => ({
  role: 'user',
  id,
  createdAt: 0,
  parts: [{ type: 'text', text }],
})

describe('sessions', () => {
  test('matchPrefix takes an exact id or a unique prefix', () => {
    expect(matchPrefix('abc', ['abc', 'abcd'], 'session')).toBe('abc')
    expect(matchPrefix('ab1', ['ab12', 'ab23'], 'session')).toBe('ab12')
  })

  test('matchPrefix refuses an unknown or ambiguous prefix', () => {
    expect(() => matchPrefix('zz', ['ab'], 'session')).toThrow('no session zz')
    expect(() => matchPrefix('a', ['ab', 'ac'], 'record')).toThrow('a matches 2 records')
  })

  test('findSession ignores sub-agent sessions for prefixes, and refuses their exact id naming the parent', async () => {
    const store = createMemorySessionStore()
    await store.create({ id: 'parent-1' })
    await store.create({ id: 'pa-child', subAgent: { name: 'explore' }, parentSessionId: 'parent-1' })
    expect(await findSession(shelfOf(store), 'pa')).toBe('parent-1')
    // A task of its own there would settle a call its parent waits on: its parent's task drives it.
    await expect(findSession(shelfOf(store), 'pa-child')).rejects.toThrow(
      "session pa-child is a sub-agent's session: the task of its parent session parent-1 drives it; resume parent-1 instead (its replay shows the sub-agent's work)",
    )
  })

  test('sessionLines marks the current session', async () => {
    const store = createMemorySessionStore({ now: () => 0 })
    await store.create({ id: 's1', title: 'First' })
    expect(sessionLines(await store.list(), 's1')).toEqual(['* s1  1970-01-01 00:00     0 records  First'])
  })

  test('sessionLines rows fit 120 columns: a long or wide title is cut, an id of 128 characters too', async () => {
    const store = createMemorySessionStore({ now: () => 0 })
    const uuid = '0b6f3c1e-8d2a-4e57-9c1f-2a7b5d9e4f10'
    await store.create({ id: uuid, title: `Refactor ${'the session store '.repeat(10)}` })
    await store.create({ id: 'wide', title: '日本語のタイトル'.repeat(10) })
    await store.create({ id: 'x'.repeat(128), title: 'long id' })
    const lines = sessionLines(await store.list(), uuid)
    for (const line of lines) expect(visibleWidth(line), line).toBeLessThanOrEqual(120)
    expect(lines.find((l) => l.includes(uuid))).toMatch(
      /^\* 0b6f3c1e-.* {5}0 records {2}Refactor the session store .*…$/,
    )
    expect(lines.find((l) => l.includes('wide'))).toMatch(/日本語.*…$/)
    expect(sessionLines(await store.list(), undefined, 80).every((line) => visibleWidth(line) <= 80)).toBe(
      true,
    )
  })

  test('sessionLines prints a time a Date cannot hold as its number instead of throwing', async () => {
    const store = createMemorySessionStore({ now: () => 9e15 })
    await store.create({ id: 's1', title: 'Far' })
    expect(sessionLines(await store.list())).toEqual(['  s1  9000000000000000     0 records  Far'])
  })

  test('promptLines lists the user prompts with their ids', () => {
    expect(promptLines([user('u1', 'hello'), { type: 'interrupt', id: 'i', createdAt: 0 }])).toEqual([
      'u1  hello',
    ])
  })

  test('exportSession writes the session, its sub-agent sessions nested, as HTML', async () => {
    const store = createMemorySessionStore()
    await store.create({ id: 'main' })
    await store.create({
      id: 'kid',
      parentSessionId: 'main',
      subAgent: { name: 'explore', parentToolCallId: 'c1' },
    })
    await store.append('kid', [user('k1', 'the child prompt')])
    await store.append('main', [
      user('u1', 'the main prompt'),
      {
        role: 'assistant',
        id: 'a1',
        createdAt: 0,
        parts: [{ type: 'tool_call', id: 'c1', name: 'explore', argumentsJson: '{}' }],
      },
      {
        role: 'tool',
        id: 't1',
        createdAt: 0,
        toolCallId: 'c1',
        toolName: 'explore',
        status: 'success',
        outputText: 'found',
        parts: [],
        uiExtra: { type: 'session', sessionId: 'kid' },
      },
    ])
    const file = await exportSession(store, 'main', join(tempDir('kode-export-'), 'deep', 'main.html'))
    const html = readFileSync(file, 'utf8')
    expect(html).toContain('the main prompt')
    expect(html).toContain('the child prompt')
  })

  test('exportSession embeds an image file only when it is one, of the type the history names', async () => {
    const dir = tempDir('kode-export-images-')
    // A 1x1 PNG, a text file a history calls a PNG, a PNG called a JPEG, and a FIFO.
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==',
      'base64',
    )
    writeFileSync(join(dir, 'ok.png'), png)
    writeFileSync(join(dir, 'secret.png'), 'AWS_SECRET_ACCESS_KEY=not-an-image\n')
    writeFileSync(join(dir, 'wrong.jpg'), png)
    execFileSync('mkfifo', [join(dir, 'pipe.png')])
    const image = (name: string, mimeType: string) => ({
      type: 'image_file' as const,
      path: join(dir, name),
      mimeType,
    })
    const store = createMemorySessionStore()
    await store.create({ id: 'main' })
    await store.append('main', [
      {
        role: 'user',
        id: 'u1',
        createdAt: 0,
        parts: [
          { type: 'text', text: 'look' },
          image('ok.png', 'image/png'),
          image('secret.png', 'image/png'),
          image('wrong.jpg', 'image/jpeg'),
          image('pipe.png', 'image/png'),
        ],
      },
    ])
    const html = readFileSync(await exportSession(store, 'main', join(dir, 'main.html')), 'utf8')
    expect(html).toContain(`src="data:image/png;base64,${png.toString('base64')}"`)
    expect(html).not.toContain(Buffer.from('AWS_SECRET').toString('base64').slice(0, 12))
    expect(html).toContain(`image file: ${join(dir, 'secret.png')} (image/png)`)
    expect(html).toContain(`image file: ${join(dir, 'wrong.jpg')} (image/jpeg)`)
    expect(html).toContain(`image file: ${join(dir, 'pipe.png')} (image/png)`)
    expect(html.match(/<img /g)).toHaveLength(1)
  })
})

describe('resumeCommand', () => {
  test('names the sessions directory as one shell word, whatever it holds', () => {
    const id = '0b6c3a57-2d2e-4a38-9e8e-6d7f0c1f3b1a'
    expect(resumeCommand(id)).toBe(`kode --resume ${id}`)
    expect(resumeCommand(id, '/tmp/plain-dir_1/sessions')).toBe(
      `kode --resume ${id} --sessions-dir /tmp/plain-dir_1/sessions`,
    )
    for (const dir of ["/tmp/it's here/sessions", '/tmp/$HOME `x` "y"/*', '/tmp/a\\b;c&d']) {
      const command = resumeCommand(id, dir)
      // A real shell reads the words back: the last one is the directory, whole.
      const words = execFileSync('sh', ['-c', `printf '%s\\n' ${command.replace(/^kode /, '')}`], {
        encoding: 'utf8',
      })
      expect(words.split('\n').slice(0, -1)).toEqual(['--resume', id, '--sessions-dir', dir])
    }
  })
})
