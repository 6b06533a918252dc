import type { HistoryEvent, ReplayEvent } from '@kode/protocol'
import { expect, test } from 'vitest'
import { type ReplayContext, SessionReplay } from '../src/replay/session-replay.js'
import { WorkStack } from '../src/replay/work-stack.js'

// A long replay holds state for the calls still waiting only: a call that ran a sub-agent which
// paused for approval is remembered until its result, then forgotten.

/** A sub-agent's pause and the call that ran it, settled: the records of one task carried on. */
function settledPause(n: number, at: number): HistoryEvent[] {
  const call = `call-${n}`
  const child = `child-${n}`
  return [
    { role: 'user', id: `u${n}`, createdAt: at, parts: [{ type: 'text', text: 'go' }] },
    {
      role: 'assistant',
      id: `a${n}`,
      createdAt: at + 1,
      responseId: `r${n}`,
      stopReason: 'tool_use',
      parts: [{ type: 'tool_call', id: call, name: 'helper', argumentsJson: '{}' }],
    },
    {
      type: 'approval_request',
      id: `q${n}`,
      createdAt: at + 2,
      toolCallId: 'k',
      toolName: 'delete',
      arguments: '{}',
      sessionId: child,
      subAgentCall: { toolCallId: call, sessionId: child },
    },
    {
      type: 'approval_decision',
      id: `d${n}`,
      createdAt: at + 3,
      toolCallId: 'k',
      toolName: 'delete',
      approved: true,
      sessionId: child,
    },
    {
      role: 'tool',
      id: `t${n}`,
      createdAt: at + 4,
      toolCallId: call,
      toolName: 'helper',
      status: 'success',
      outputText: 'done',
      parts: [],
    },
  ]
}

test('a call whose sub-agent paused is forgotten once its result is replayed', () => {
  const out: ReplayEvent[] = []
  const context: ReplayContext = {
    out,
    work: new WorkStack(),
    mayReplay: () => false,
    replayChild: () => {},
    decidedIn: () => false,
  }
  const replay = new SessionReplay('main', context, new Map())
  for (let n = 0; n < 100; n++) {
    for (const record of settledPause(n, n * 10)) {
      if ('role' in record) replay.message(record, true)
      else replay.record(record)
    }
  }
  replay.closeTurn()
  expect(out.filter((event) => event.type === 'tool_result')).toHaveLength(100)
  expect((replay as unknown as { suspendedCalls: ReadonlySet<string> }).suspendedCalls.size).toBe(0)
})
