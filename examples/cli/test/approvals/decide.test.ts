import type { PendingApproval } from '@kode/core'
import { describe, expect, test } from 'vitest'
import { approveAll, askEach, denyAll } from '../../src/approvals/decide.js'

// Call ids are unique within a session only: a sub-agent's `call_0` and its parent's may wait
// together, and the engine refuses a decision that does not say which one it answers.
const pending: PendingApproval[] = [
  { toolCallId: 'call_0', toolName: 'write_file', arguments: '{"path":"a"}' },
  { toolCallId: 'call_0', toolName: 'write_file', arguments: '{"path":"b"}', sessionId: 'child-1' },
]
const signal = new AbortController().signal

describe('decisions on calls that wait in sub-agents', () => {
  test('name the session each call waits in, whichever way they are decided', async () => {
    const answers = ['y', 'why not']
    const asked = askEach({ print: () => {}, ask: async () => answers.shift() })
    for (const decide of [approveAll(), denyAll(() => {}), asked]) {
      const decisions = await decide(pending, signal)
      expect(decisions?.map(({ toolCallId, sessionId }) => ({ toolCallId, sessionId }))).toEqual([
        { toolCallId: 'call_0', sessionId: undefined },
        { toolCallId: 'call_0', sessionId: 'child-1' },
      ])
      expect(decisions?.[0]).not.toHaveProperty('sessionId')
    }
  })

  test('a tool allowed for the session is approved in every session', async () => {
    const decide = askEach({ print: () => {}, ask: async () => 'a' })
    const decisions = await decide(pending, signal)
    expect(decisions).toEqual([
      { toolCallId: 'call_0', approved: true, reason: 'allowed for the session' },
      { toolCallId: 'call_0', sessionId: 'child-1', approved: true, reason: 'allowed for the session' },
    ])
  })
})
