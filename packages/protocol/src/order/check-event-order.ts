import type { Event } from '../events/index.js'

/** The invariant an event sequence broke. */
export type OrderRule =
  | 'thinking_delta_without_start'
  | 'thinking_start_nested'
  | 'thinking_end_without_start'
  | 'thinking_not_ended'
  | 'text_delta_without_start'
  | 'text_start_nested'
  | 'text_end_without_start'
  | 'text_not_ended'
  | 'streams_overlap'
  | 'tool_call_start_during_text'
  | 'response_complete_while_streaming'
  | 'response_complete_twice'
  | 'response_complete_after_interrupt'
  | 'response_incomplete'
  | 'stream_after_response_complete'
  | 'interrupt_while_streaming'
  | 'turn_start_nested'
  | 'turn_end_without_start'
  | 'turn_not_ended'
  | 'task_start_nested'
  | 'task_finish_without_start'
  | 'task_not_finished'
  | 'tool_result_without_call'
  | 'tool_result_twice'
  | 'tool_call_twice'
  | 'tool_call_without_result'
  | 'tool_ran_without_approval'
  | 'approval_requested_twice'
  | 'progress_outside_call'
  | 'compaction_start_nested'
  | 'compaction_end_without_start'
  | 'compaction_not_ended'
  | 'end_not_last'
  | 'budget_outside_turn'

export interface OrderViolation {
  /** Index of the event that broke the rule (the sequence length for rules checked at the end). */
  index: number
  sessionId: string
  rule: OrderRule
  message: string
}

interface SessionState {
  thinkingOpen: boolean
  textOpen: boolean
  taskOpen: boolean
  turnOpen: boolean
  /** Within the open turn. */
  responseCompletes: number
  streamedInTurn: boolean
  endedAbnormally: boolean
  interrupted: boolean
  completedResponseIds: Set<string>
  /** tool call id -> index of its `tool_call`, until its result arrives. */
  pendingToolCalls: Map<string, number>
  resolvedToolCalls: Set<string>
  /** Calls whose approval was requested and not yet decided. */
  awaitingApproval: Set<string>
  compactionOpen: boolean
}

function newState(): SessionState {
  return {
    thinkingOpen: false,
    textOpen: false,
    taskOpen: false,
    turnOpen: false,
    responseCompletes: 0,
    streamedInTurn: false,
    endedAbnormally: false,
    interrupted: false,
    completedResponseIds: new Set(),
    pendingToolCalls: new Map(),
    resolvedToolCalls: new Set(),
    awaitingApproval: new Set(),
    compactionOpen: false,
  }
}

/**
 * Checks the protocol's event-ordering invariants over a complete event sequence, per `sessionId`, and
 * returns every violation (an empty array means the sequence is valid). Hosts can run it in their
 * own tests; every engine run and every replay derivation in Kode's tests passes it.
 *
 * Rules: thinking and text streams open before their deltas, never nest or overlap, and close
 * exactly once (before `response_complete`, `tool_call_start` for text, `interrupt` and the end);
 * at most one `response_complete` per turn and per response id, none after an `interrupt` in the
 * same turn, and one for every turn that streamed output and ended without an interrupt or error;
 * turns and tasks open before they close and close by the end; each `tool_result` answers exactly
 * one earlier `tool_call` of its session, a call is announced once, and every call has its result
 * when the task finishes (unless it finishes `awaiting_approval`: a call whose sub-agent waits is
 * answered by the task that carries it on);
 * a call whose approval was requested is not requested twice and has no successful `tool_result`
 * before its `tool_approval_decision` (an interrupt may still answer it); `tool_progress` comes
 * between its call's `tool_call` and `tool_result`; `compaction_start` and `compaction_end` pair
 * up without nesting; `end` comes last.
 */
export function checkEventOrder(events: readonly Event[]): OrderViolation[] {
  const violations: OrderViolation[] = []
  const sessions = new Map<string, SessionState>()
  const stateOf = (sessionId: string) => {
    let state = sessions.get(sessionId)
    if (!state) {
      state = newState()
      sessions.set(sessionId, state)
    }
    return state
  }

  events.forEach((event, index) => {
    const fail = (rule: OrderRule, message: string) =>
      violations.push({ index, sessionId: event.sessionId, rule, message })
    if (event.type === 'end') {
      if (index !== events.length - 1) fail('end_not_last', '`end` must be the last event')
      return
    }
    const s = stateOf(event.sessionId)
    const responseDone = () =>
      'responseId' in event &&
      event.responseId !== undefined &&
      s.completedResponseIds.has(event.responseId) &&
      fail('stream_after_response_complete', `${event.type} after response ${event.responseId} completed`)

    switch (event.type) {
      case 'thinking_start':
        responseDone()
        if (s.thinkingOpen) fail('thinking_start_nested', 'thinking_start while thinking is open')
        if (s.textOpen) fail('streams_overlap', 'thinking_start while assistant text is open')
        s.thinkingOpen = true
        s.streamedInTurn = true
        break
      case 'thinking_delta':
        responseDone()
        if (!s.thinkingOpen) fail('thinking_delta_without_start', 'thinking_delta before thinking_start')
        break
      case 'thinking_end':
        if (!s.thinkingOpen)
          fail('thinking_end_without_start', 'thinking_end without an open thinking stream')
        s.thinkingOpen = false
        break
      case 'assistant_text_start':
        responseDone()
        if (s.textOpen) fail('text_start_nested', 'assistant_text_start while text is open')
        if (s.thinkingOpen) fail('streams_overlap', 'assistant_text_start while thinking is open')
        s.textOpen = true
        s.streamedInTurn = true
        break
      case 'assistant_text_delta':
        responseDone()
        if (!s.textOpen) fail('text_delta_without_start', 'assistant_text_delta before assistant_text_start')
        break
      case 'assistant_text_end':
        if (!s.textOpen) fail('text_end_without_start', 'assistant_text_end without an open text stream')
        s.textOpen = false
        break
      case 'assistant_image_delta':
        responseDone()
        break
      case 'tool_call_start':
        responseDone()
        if (s.textOpen) fail('tool_call_start_during_text', 'tool_call_start while assistant text is open')
        s.streamedInTurn = true
        break
      case 'response_complete':
        if (s.thinkingOpen || s.textOpen) {
          fail('response_complete_while_streaming', 'response_complete before its streams ended')
        }
        if (s.interrupted) fail('response_complete_after_interrupt', 'response_complete after an interrupt')
        if (s.turnOpen && s.responseCompletes > 0) {
          fail('response_complete_twice', 'a second response_complete in one turn')
        } else if (event.responseId !== undefined && s.completedResponseIds.has(event.responseId)) {
          fail('response_complete_twice', `a second response_complete for response ${event.responseId}`)
        }
        if (event.responseId !== undefined) s.completedResponseIds.add(event.responseId)
        s.responseCompletes++
        break
      case 'tool_call':
        if (s.pendingToolCalls.has(event.toolCallId))
          fail('tool_call_twice', `a second tool_call for ${event.toolCallId} before its tool_result`)
        s.pendingToolCalls.set(event.toolCallId, index)
        break
      case 'tool_approval_request':
        if (s.awaitingApproval.has(event.toolCallId))
          fail('approval_requested_twice', `a second tool_approval_request for ${event.toolCallId}`)
        s.awaitingApproval.add(event.toolCallId)
        break
      case 'tool_approval_decision':
        s.awaitingApproval.delete(event.toolCallId)
        break
      case 'tool_result':
        if (event.status === 'success' && s.awaitingApproval.has(event.toolCallId)) {
          fail(
            'tool_ran_without_approval',
            `tool call ${event.toolCallId} succeeded before its approval decision`,
          )
        }
        if (s.pendingToolCalls.has(event.toolCallId)) {
          s.pendingToolCalls.delete(event.toolCallId)
          s.resolvedToolCalls.add(event.toolCallId)
        } else if (s.resolvedToolCalls.has(event.toolCallId)) {
          fail('tool_result_twice', `a second tool_result for ${event.toolCallId}`)
        } else {
          fail('tool_result_without_call', `tool_result for ${event.toolCallId} without its tool_call`)
        }
        break
      case 'interrupt':
        if (s.thinkingOpen || s.textOpen)
          fail('interrupt_while_streaming', 'interrupt before open streams ended')
        s.interrupted = true
        s.endedAbnormally = true
        break
      case 'error':
        s.endedAbnormally = true
        break
      case 'turn_start':
        if (s.turnOpen) fail('turn_start_nested', 'turn_start while a turn is open')
        s.turnOpen = true
        s.responseCompletes = 0
        s.streamedInTurn = false
        s.endedAbnormally = false
        s.interrupted = false
        break
      case 'turn_end':
        if (!s.turnOpen) fail('turn_end_without_start', 'turn_end without turn_start')
        if (s.streamedInTurn && s.responseCompletes === 0 && !s.endedAbnormally) {
          fail('response_incomplete', 'a turn that streamed output ended without response_complete')
        }
        s.turnOpen = false
        break
      case 'task_start':
        if (s.taskOpen) fail('task_start_nested', 'task_start while a task is running in this session')
        s.taskOpen = true
        s.interrupted = false
        break
      case 'task_finish':
        if (!s.taskOpen) fail('task_finish_without_start', 'task_finish without task_start')
        // A task that pauses for approval may leave a call running a sub-agent that waits: the
        // task that carries it on answers it, without announcing it again.
        if (event.reason !== 'awaiting_approval') {
          for (const id of s.pendingToolCalls.keys()) {
            fail('tool_call_without_result', `tool_call ${id} has no tool_result when the task finished`)
          }
          s.pendingToolCalls.clear()
        }
        s.taskOpen = false
        break
      case 'context_usage':
        // The budget before a call belongs to the turn that makes the call.
        if (event.estimated && !s.turnOpen)
          fail('budget_outside_turn', 'context_usage with estimated (a budget before a call) outside a turn')
        break
      case 'tool_progress':
        if (!s.pendingToolCalls.has(event.toolCallId)) {
          fail('progress_outside_call', `tool_progress for ${event.toolCallId} outside its running call`)
        }
        break
      case 'compaction_start':
        if (s.compactionOpen) fail('compaction_start_nested', 'compaction_start while a compaction is open')
        s.compactionOpen = true
        break
      case 'compaction_end':
        if (!s.compactionOpen) fail('compaction_end_without_start', 'compaction_end without compaction_start')
        s.compactionOpen = false
        break
      case 'usage':
      case 'task_metadata':
      case 'user_message':
      case 'developer_message':
      case 'todo_change':
      case 'welcome':
      case 'replay_history':
        break
      default: {
        const unreachable: never = event
        void unreachable
      }
    }
  })

  const end = events.length
  for (const [sessionId, s] of sessions) {
    const fail = (rule: OrderRule, message: string) =>
      violations.push({ index: end, sessionId, rule, message })
    if (s.thinkingOpen) fail('thinking_not_ended', 'thinking stream never ended')
    if (s.textOpen) fail('text_not_ended', 'assistant text stream never ended')
    if (s.turnOpen) fail('turn_not_ended', 'a turn never ended')
    if (s.taskOpen) fail('task_not_finished', 'a task never finished')
    if (s.compactionOpen) fail('compaction_not_ended', 'a compaction never ended')
  }
  return violations
}
