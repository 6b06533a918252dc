import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { HistoryEvent } from '@kode/protocol'
import { createMemorySessionStore, forkSession, SessionError, type SessionStore } from '@kode/session'
import { createFileSessionStore } from '@kode/session/file'
import { beforeEach, describe, expect, test } from 'vitest'
import { callIds, HistoryBuilder, shortConversation } from '../../../test/history/history.js'

let store: SessionStore
beforeEach(() => {
  let n = 0
  store = createMemorySessionStore({ createId: () => `s${++n}` })
})

async function source(title?: string) {
  const info = await store.create({ id: 'src', model: 'm', provider: 'p', ...(title ? { title } : {}) })
  await store.append(info.id, shortConversation())
  return info
}

async function codeOf(promise: Promise<unknown>) {
  return promise.then(
    () => undefined,
    (error: unknown) => (SessionError.is(error) ? error.code : String(error)),
  )
}

describe('forkSession', () => {
  test('copies the history up to and including the chosen record', async () => {
    await source()
    const fork = await forkSession(store, 'src', 'm2')
    expect(await store.read(fork.id)).toEqual(shortConversation().slice(0, 2))
    expect(fork.recordCount).toBe(2)
  })

  test('copies the whole history when no record is chosen', async () => {
    await source()
    const fork = await forkSession(store, 'src')
    expect(await store.read(fork.id)).toEqual(shortConversation())
    expect(fork.forkedFrom).toEqual({ sessionId: 'src', messageId: 'm4' })
  })

  test('links the fork to its source and keeps model and provider', async () => {
    await source('Fix bug')
    const fork = await forkSession(store, 'src', 'm3')
    expect(fork).toMatchObject({
      parentSessionId: 'src',
      forkedFrom: { sessionId: 'src', messageId: 'm3' },
      model: 'm',
      provider: 'p',
    })
  })

  test('a fork of a sub-agent session is a top-level session', async () => {
    await store.create({ id: 'child', subAgent: { name: 'explore' }, parentSessionId: 'main' })
    await store.append('child', shortConversation())
    const fork = await forkSession(store, 'child')
    expect(fork.subAgent).toBeUndefined()
    expect(fork.parentSessionId).toBe('child')
  })

  test('the title is marked as a fork, and forking a fork does not stack the mark', async () => {
    await source('Fix bug')
    const first = await forkSession(store, 'src')
    expect(first.title).toBe('Fix bug (fork)')
    const second = await forkSession(store, first.id)
    expect(second.title).toBe('Fix bug (fork)')
  })

  test('an untitled source is named after its first prompt, cut to 60 characters', async () => {
    await store.create({ id: 'src' })
    const h = new HistoryBuilder()
    await store.append('src', [h.system('prompt'), h.user(`${'a'.repeat(80)}\nsecond line`)])
    expect((await forkSession(store, 'src')).title).toBe(`${'a'.repeat(59)}… (fork)`)
  })

  test('a first prompt cut for the title never splits a character in two', async () => {
    await store.create({ id: 'src' })
    const h = new HistoryBuilder()
    // The emoji's two UTF-16 units straddle the cut: half of it would be a lone surrogate.
    await store.append('src', [h.user(`${'a'.repeat(58)}😀${'b'.repeat(20)}`)])
    const { title } = await forkSession(store, 'src')
    expect(title).toBe(`${'a'.repeat(58)}… (fork)`)
    expect(title).not.toMatch(/\p{Cs}/u)
  })

  test('the id and title can be given', async () => {
    await source('Fix bug')
    expect(await forkSession(store, 'src', 'm1', { id: 'mine', title: 'Try B' })).toMatchObject({
      id: 'mine',
      title: 'Try B',
    })
  })

  test('the source is not changed', async () => {
    const before = await source('Fix bug')
    await forkSession(store, 'src', 'm2')
    expect(await store.read('src')).toEqual(shortConversation())
    expect(await store.info('src')).toEqual({ ...before, recordCount: 4, updatedAt: expect.any(Number) })
  })

  test('forking an empty session is refused and creates nothing', async () => {
    await store.create({ id: 'empty' })
    expect(await codeOf(forkSession(store, 'empty'))).toBe('empty_session')
    expect((await store.list()).map((s) => s.id)).toEqual(['empty'])
  })

  test('forking at a record that does not exist is refused and creates nothing', async () => {
    await source()
    expect(await codeOf(forkSession(store, 'src', 'nope'))).toBe('message_not_found')
    expect((await store.list()).map((s) => s.id)).toEqual(['src'])
  })

  test('forking a missing session fails with session_not_found', async () => {
    expect(await codeOf(forkSession(store, 'nope'))).toBe('session_not_found')
  })

  test('a long history is copied in batches of 1,000 records, so a store that takes only so much in one append can fork it', async () => {
    const appends: number[] = []
    const counting: SessionStore = {
      ...store,
      append: (sessionId, events) => {
        appends.push(events.length)
        return store.append(sessionId, events)
      },
    }
    const history = Array.from(
      { length: 2500 },
      (_, i): HistoryEvent => ({
        role: 'user',
        id: `u${i}`,
        createdAt: i,
        parts: [{ type: 'text', text: `message ${i}` }],
      }),
    )
    await store.create({ id: 'src' })
    await store.append('src', history)
    const fork = await forkSession(counting, 'src')
    expect(appends).toEqual([1000, 1000, 500])
    expect(await store.read(fork.id)).toEqual(history)
    expect(fork.recordCount).toBe(2500)
  })

  test('a fork in the file store is a session like any other', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kode-fork-'))
    try {
      const files = createFileSessionStore({ dir, fsync: false })
      await files.create({ id: 'src' })
      await files.append('src', shortConversation())
      const fork = await forkSession(files, 'src', 'm3', { id: 'f' })
      await files.close()
      const reopened = createFileSessionStore({ dir })
      expect(await reopened.read('f')).toEqual(shortConversation().slice(0, 3))
      expect(await reopened.info('f')).toEqual(fork)
      await reopened.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('a fork where a sub-agent waits for approval', () => {
  let dir: string
  let files: SessionStore
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kode-fork-sub-'))
    files = createFileSessionStore({ dir, fsync: false })
    return async () => {
      await files.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  /**
   * A parent paused on a call of its sub-agent `child` (`w1`, run by the parent's `p1`), and a
   * child that the source has since carried on: a decision and what followed.
   */
  async function pausedParent() {
    const b = new HistoryBuilder()
    const ask = b.calls(['writer'])
    const p1 = callIds(ask)[0]!
    const childAsk = b.calls(['write_file'])
    const w1 = callIds(childAsk)[0]!
    const request = { toolCallId: w1, toolName: 'write_file', arguments: '{}' }
    const childPaused: HistoryEvent[] = [
      b.user('Write a.txt'),
      childAsk,
      { type: 'approval_request', id: 'child-request', createdAt: 1, ...request },
      b.taskMetadata(1),
    ]
    const childLater: HistoryEvent[] = [
      {
        type: 'approval_decision',
        id: 'later-1',
        createdAt: 2,
        toolCallId: w1,
        toolName: 'write_file',
        approved: true,
      },
      b.result(w1, 'write_file', 'wrote a.txt'),
    ]
    await files.create({ id: 'parent', title: 'Parent' })
    await files.create({
      id: 'child',
      parentSessionId: 'parent',
      subAgent: { name: 'writer', parentToolCallId: p1 },
    })
    await files.append('child', [...childPaused, ...childLater])
    const parent: HistoryEvent[] = [
      b.user('Please write a.txt'),
      ask,
      {
        type: 'approval_request',
        id: 'parent-request',
        createdAt: 3,
        ...request,
        sessionId: 'child',
        subAgentCall: { toolCallId: p1, sessionId: 'child' },
      },
      b.taskMetadata(1),
    ]
    await files.append('parent', parent)
    return { parent, childPaused, childAll: [...childPaused, ...childLater] }
  }

  test("the fork owns a copy of the waiting sub-agent, cut where it paused; the source's is untouched", async () => {
    const { parent, childPaused, childAll } = await pausedParent()
    const fork = await forkSession(files, 'parent')
    const forked = await files.read(fork.id)
    const request = forked.find((e) => 'type' in e && e.type === 'approval_request')
    if (!request || !('subAgentCall' in request) || !request.subAgentCall) throw new Error('no request')
    const copy = request.subAgentCall.sessionId
    expect(copy).not.toBe('child')
    expect(request.sessionId).toBe(copy)
    expect(await files.read(copy)).toEqual(childPaused)
    expect(await files.info(copy)).toMatchObject({
      parentSessionId: fork.id,
      subAgent: { name: 'writer' },
    })
    // Only the link changed; every other record is copied as it was.
    expect(forked.filter((e) => e !== request)).toEqual(parent.filter((e) => e.id !== request.id))
    expect(await files.read('child')).toEqual(childAll)
    expect(await files.read('parent')).toEqual(parent)
  })

  test('a fork made after the decision, before the call ran the sub-agent to its end, cuts the copy just after its decision', async () => {
    const { parent, childPaused, childAll } = await pausedParent()
    const w1 = (parent[2] as { toolCallId: string }).toolCallId
    const decision: HistoryEvent = {
      type: 'approval_decision',
      id: 'parent-decision',
      createdAt: 4,
      toolCallId: w1,
      toolName: 'write_file',
      approved: true,
      sessionId: 'child',
    }
    await files.append('parent', [decision])
    const fork = await forkSession(files, 'parent')
    const forked = await files.read(fork.id)
    const copy = (forked.at(-1) as { sessionId: string }).sessionId
    expect(copy).not.toBe('child')
    // The child's own decision is kept (its continue had begun); what it did next is not.
    expect(await files.read(copy)).toEqual(childAll.slice(0, childPaused.length + 1))
  })

  test('a sub-agent that asked again after a decision is cut at the end of its new pause', async () => {
    const { parent, childAll } = await pausedParent()
    const w1 = (parent[2] as { toolCallId: string }).toolCallId
    const b = new HistoryBuilder(1_900_000_000_000)
    const again = b.calls(['write_file'])
    const w2 = callIds(again)[0]!
    const request = { toolCallId: w2, toolName: 'write_file', arguments: '{}' }
    const childAgain: HistoryEvent[] = [
      again,
      { type: 'approval_request', id: 'child-request-2', createdAt: 5, ...request },
      b.taskMetadata(1),
    ]
    await files.append('child', childAgain)
    await files.append('parent', [
      {
        type: 'approval_decision',
        id: 'd1',
        createdAt: 4,
        toolCallId: w1,
        toolName: 'write_file',
        approved: true,
        sessionId: 'child',
      },
      {
        type: 'approval_request',
        id: 'parent-request-2',
        createdAt: 6,
        ...request,
        sessionId: 'child',
        subAgentCall: {
          toolCallId: (parent[2] as { subAgentCall: { toolCallId: string } }).subAgentCall.toolCallId,
          sessionId: 'child',
        },
      },
      b.taskMetadata(1),
    ])
    const fork = await forkSession(files, 'parent')
    const copy = (
      (await files.read(fork.id)).find((e) => e.id === 'parent-request-2') as { sessionId: string }
    ).sessionId
    expect(await files.read(copy)).toEqual([...childAll, ...childAgain])
  })

  test('a fork made after the sub-agent was answered shares its finished session', async () => {
    const { parent } = await pausedParent()
    const p1 = (parent[2] as { subAgentCall: { toolCallId: string } }).subAgentCall.toolCallId
    const b = new HistoryBuilder(1_800_000_000_000)
    const answered = b.result(p1, 'writer', 'done', { uiExtra: { type: 'session', sessionId: 'child' } })
    await files.append('parent', [answered])
    const fork = await forkSession(files, 'parent')
    expect(await files.read(fork.id)).toEqual([...parent, answered])
    expect((await files.list()).map((info) => info.id).sort()).toEqual(['child', fork.id, 'parent'].sort())
  })
})
