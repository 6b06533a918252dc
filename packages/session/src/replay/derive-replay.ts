import {
  type AssistantImageDeltaEvent,
  type AssistantMessage,
  type HistoryEvent,
  joinText,
  joinThinking,
  type ReplayEvent,
  type ResponseCompleteEvent,
  serverToolsOf,
  type ToolCallEvent,
  type ToolResultEvent,
  type ToolResultMessage,
  toolResultEventStatus,
  type UsageEvent,
} from '@kode/protocol'

/** Histories of sub-agent sessions, by session id, as `loadSubSessions` returns them. */
export type SubSessionHistories = ReadonlyMap<string, readonly HistoryEvent[]>

/** Options of `deriveReplayEvents`. */
export interface ReplayOptions {
  /** The session id every derived event carries (default `''`). */
  sessionId?: string | undefined
  /**
   * Sub-agent sessions to replay inline: a tool result linking a child session
   * (`uiExtra: { type: 'session', sessionId }`) is preceded by that session's own replay.
   */
  subSessions?: SubSessionHistories | undefined
}

/**
 * Derives the protocol events a UI replays for a persisted history, the same events the engine
 * emitted live; the result passes `checkEventOrder`:
 *
 * - `user_message` per user message (text joined, images, `mode` and `modeContext` when present); `developer_message` per
 *   developer message; system messages are not replayed.
 * - Each assistant message is one turn: `turn_start`, an `assistant_image_delta` per image part,
 *   `response_complete` (text parts joined, thinking joined as `thinkingText`), and `usage` when it
 *   carries usage and is not an error response. Its tool calls are replayed as `tool_call` right
 *   before their result; calls that never got one are replayed at the end of the turn. (A
 *   turn per response holds for any history, including ones another tool wrote, since that is
 *   what `checkEventOrder` and the live engine need: see docs/sessions.md.)
 * - `tool_result` per tool result (`aborted` is reported as `error`, then an `interrupt`), preceded
 *   by the replay of the sub-agent session it links, and followed by `todo_change` when the result
 *   carries a todo list with the `todo_change` side effect.
 * - An aborted assistant message ends its turn with an `interrupt`, also when its last tool result
 *   was aborted and so already followed by one. `turn_end` closes the turn at the next user,
 *   developer or assistant message, at a task-metadata record, or at the end.
 * - Records: `error` becomes `error`, `interrupt` becomes `interrupt`, `task_metadata` becomes
 *   `task_metadata`; `compaction` closes the open turn and becomes `compaction_start` then
 *   `compaction_end` (`compacted: true`, with its summary and token counts). The records it
 *   summarised are replayed in full before it: replay always shows the whole history.
 * - `approval_request` and `approval_decision` become `tool_approval_request` and
 *   `tool_approval_decision`. A sub-agent's call recorded in its parent's history carries the
 *   sub-agent's session id, as it did live, unless the sub-agent's replay shows it inline (its
 *   session is among `subSessions` and the parent's call has its result); the parent's call that
 *   waits for it is replayed with its result, in a later task.
 *
 * Every event carries the `createdAt` of the record it comes from (a `tool_call` that of its
 * assistant message); a turn's closing events carry the time of its latest record.
 */
export function deriveReplayEvents(
  history: readonly HistoryEvent[],
  options: ReplayOptions = {},
): ReplayEvent[] {
  const sessionId = options.sessionId ?? ''
  const out: ReplayEvent[] = []
  const context: ReplayContext = {
    out,
    subSessions: options.subSessions ?? new Map(),
    seen: new Set([sessionId]),
  }
  new SessionReplay(sessionId, context).run(history)
  return out
}

interface ReplayContext {
  out: ReplayEvent[]
  subSessions: SubSessionHistories
  /** Sessions already replayed, so a link cycle cannot recurse forever. */
  seen: Set<string>
}

/** Replays one session's history into the shared output. */
class SessionReplay {
  private turnOpen = false
  private turnAborted = false
  private lastTimestamp = 0
  /** Tool calls of the open turn whose `tool_call` event waits for their result. */
  private readonly pendingCalls = new Map<string, ToolCallEvent>()
  /** Calls whose approval was requested and not decided yet, with the request's response id. */
  private readonly awaitingApproval = new Map<string, string | undefined>()
  /** Calls that ran a sub-agent which paused for approval: replayed when their result comes. */
  private readonly suspendedCalls = new Set<string>()
  /** Calls whose `tool_call` was replayed ahead of their result (before their progress). */
  private readonly announced = new Set<string>()
  /** Ids of the calls the history has a result for. */
  private answered = new Set<string>()

  constructor(
    private readonly sessionId: string,
    private readonly context: ReplayContext,
  ) {}

  run(history: readonly HistoryEvent[]): void {
    for (const record of history)
      if ('role' in record && record.role === 'tool') this.answered.add(record.toolCallId)
    for (let i = 0; i < history.length; i++) this.take(history, i)
    this.closeTurn()
  }

  private emit(event: ReplayEvent): void {
    this.context.out.push(event)
    this.lastTimestamp = Math.max(this.lastTimestamp, event.timestamp)
  }

  private take(history: readonly HistoryEvent[], index: number): void {
    const event = history[index]!
    const sessionId = this.sessionId
    const timestamp = event.createdAt
    if ('role' in event) {
      switch (event.role) {
        case 'system':
          return
        case 'user': {
          this.closeTurn()
          const images = event.parts.filter((part) => part.type !== 'text')
          const content = joinText(event.parts)
          const { mode, modeContext } = event
          this.emit({
            type: 'user_message',
            sessionId,
            timestamp,
            content,
            ...(images.length ? { images } : {}),
            ...(mode !== undefined ? { mode } : {}),
            ...(modeContext !== undefined ? { modeContext } : {}),
          })
          return
        }
        case 'developer':
          this.closeTurn()
          this.emit({ type: 'developer_message', sessionId, timestamp, item: event })
          return
        case 'assistant':
          this.closeTurn()
          this.assistant(event)
          return
        case 'tool':
          this.toolResult(event, isLastInTurn(history, index))
          return
        default: {
          const unknown: never = event
          void unknown
          return
        }
      }
    }
    switch (event.type) {
      case 'error':
        this.emit({
          type: 'error',
          sessionId,
          timestamp,
          errorMessage: event.message,
          canRetry: event.canRetry,
        })
        return
      case 'interrupt':
        this.emit({ type: 'interrupt', sessionId, timestamp })
        return
      case 'task_metadata':
        this.closeTurn()
        this.emit({ type: 'task_metadata', sessionId, timestamp, metadata: event.metadata })
        return
      case 'compaction': {
        // A marker between turns: the records it summarised were replayed above, as they happened.
        this.closeTurn()
        const { reason, tokensBefore, tokensAfter, summary, firstKeptId } = event
        this.emit({ type: 'compaction_start', sessionId, timestamp, reason, tokensBefore })
        this.emit({
          type: 'compaction_end',
          sessionId,
          timestamp,
          reason,
          compacted: true,
          tokensBefore,
          tokensAfter,
          summary,
          firstKeptId,
        })
        return
      }
      case 'approval_request': {
        const { toolCallId, toolName, responseId, subAgentCall } = event
        if (subAgentCall) {
          this.suspendedCalls.add(subAgentCall.toolCallId)
          if (this.replaysInline(subAgentCall)) return
        }
        this.awaitingApproval.set(toolCallId, responseId)
        this.emit({
          type: 'tool_approval_request',
          sessionId: event.sessionId ?? sessionId,
          timestamp,
          ...(responseId !== undefined ? { responseId } : {}),
          toolCallId,
          toolName,
          arguments: event.arguments,
        })
        return
      }
      case 'approval_decision': {
        const { toolCallId, toolName, approved, reason } = event
        if (!this.awaitingApproval.has(toolCallId) && event.sessionId !== undefined) return
        const responseId = this.awaitingApproval.get(toolCallId)
        this.awaitingApproval.delete(toolCallId)
        this.emit({
          type: 'tool_approval_decision',
          sessionId: event.sessionId ?? sessionId,
          timestamp,
          ...(responseId !== undefined ? { responseId } : {}),
          toolCallId,
          toolName,
          approved,
          ...(reason !== undefined ? { reason } : {}),
        })
        return
      }
      case 'tool_progress': {
        const { toolCallId, toolName, message, siblingToolCallIds, responseId } = event
        // Progress comes from a running call: its `tool_call` is replayed first.
        const call = this.pendingCalls.get(toolCallId)
        if (call && !this.announced.has(toolCallId)) {
          this.announced.add(toolCallId)
          this.emit(call)
        }
        this.emit({
          type: 'tool_progress',
          sessionId,
          timestamp,
          ...(responseId !== undefined ? { responseId } : {}),
          toolCallId,
          toolName,
          message,
          siblingToolCallIds,
        })
        return
      }
      default: {
        const unknown: never = event
        void unknown
      }
    }
  }

  private assistant(message: AssistantMessage): void {
    const { sessionId } = this
    const { createdAt: timestamp, responseId, parts } = message
    this.emit({ type: 'turn_start', sessionId, timestamp })
    this.turnOpen = true
    this.turnAborted = message.stopReason === 'aborted'
    // Literal objects, not spreads: replaying a long session builds hundreds of thousands of them.
    for (const part of parts) {
      // Images stream before the response completes, so they are replayed before it too.
      if (part.type === 'image_file' || part.type === 'image_url') {
        const image: AssistantImageDeltaEvent = { type: 'assistant_image_delta', sessionId, timestamp }
        if (responseId !== undefined) image.responseId = responseId
        if (part.type === 'image_file') image.filePath = part.path
        else image.url = part.url
        this.emit(image)
      }
    }
    const complete: ResponseCompleteEvent =
      responseId === undefined
        ? { type: 'response_complete', sessionId, timestamp, content: joinText(parts) }
        : { type: 'response_complete', sessionId, timestamp, responseId, content: joinText(parts) }
    const thinkingText = joinThinking(parts)
    if (thinkingText !== undefined) complete.thinkingText = thinkingText
    const serverTools = serverToolsOf(parts)
    if (serverTools !== undefined) complete.serverTools = serverTools
    this.emit(complete)
    if (message.usage && !message.isApiError && message.stopReason !== 'error') {
      const usage: UsageEvent =
        responseId === undefined
          ? { type: 'usage', sessionId, timestamp, usage: message.usage }
          : { type: 'usage', sessionId, timestamp, responseId, usage: message.usage }
      if (message.costUsd !== undefined) usage.costUsd = message.costUsd
      this.emit(usage)
    }
    for (const part of parts) {
      if (part.type !== 'tool_call') continue
      const call: ToolCallEvent =
        responseId === undefined
          ? {
              type: 'tool_call',
              sessionId,
              timestamp,
              toolCallId: part.id,
              toolName: part.name,
              arguments: part.argumentsJson,
            }
          : {
              type: 'tool_call',
              sessionId,
              timestamp,
              responseId,
              toolCallId: part.id,
              toolName: part.name,
              arguments: part.argumentsJson,
            }
      this.pendingCalls.set(part.id, call)
    }
  }

  private toolResult(result: ToolResultMessage, isLastInTurn: boolean): void {
    const { sessionId } = this
    const timestamp = result.createdAt
    const call = this.pendingCalls.get(result.toolCallId)
    if (call) {
      this.pendingCalls.delete(result.toolCallId)
      if (!this.announced.delete(result.toolCallId)) this.emit(call)
    }
    if (result.uiExtra?.type === 'session') this.subSession(result.uiExtra.sessionId)
    const responseId = call?.responseId
    const { toolCallId, toolName, outputText } = result
    const status = toolResultEventStatus(result.status)
    const event: ToolResultEvent =
      responseId === undefined
        ? {
            type: 'tool_result',
            sessionId,
            timestamp,
            toolCallId,
            toolName,
            result: outputText,
            status,
            isLastInTurn,
          }
        : {
            type: 'tool_result',
            sessionId,
            timestamp,
            responseId,
            toolCallId,
            toolName,
            result: outputText,
            status,
            isLastInTurn,
          }
    if (result.uiExtra) event.uiExtra = result.uiExtra
    if (result.taskMetadata) event.taskMetadata = result.taskMetadata
    this.emit(event)
    if (result.uiExtra?.type === 'todo_list' && result.sideEffects?.includes('todo_change')) {
      this.emit({ type: 'todo_change', sessionId, timestamp, todos: result.uiExtra.todos })
    }
    if (result.status === 'aborted') this.emit({ type: 'interrupt', sessionId, timestamp })
  }

  /**
   * Whether a sub-agent's pending call, recorded in this session too, is shown by the sub-agent's
   * own replay (its session is given and the call that ran it has a result here), so it is not
   * shown twice. Otherwise it is replayed here, with the sub-agent's session id, as it was live.
   */
  private replaysInline(via: { toolCallId: string; sessionId: string }): boolean {
    return (
      this.answered.has(via.toolCallId) &&
      this.context.subSessions.has(via.sessionId) &&
      !this.context.seen.has(via.sessionId)
    )
  }

  private subSession(childId: string): void {
    const history = this.context.subSessions.get(childId)
    if (!history || this.context.seen.has(childId)) return
    this.context.seen.add(childId)
    new SessionReplay(childId, this.context).run(history)
  }

  private closeTurn(): void {
    if (!this.turnOpen) return
    const timestamp = this.lastTimestamp
    // Calls that never got a result are still shown, at the end of their turn; a call that awaits
    // approval runs later (its result follows the decision, in a later task). Usually there are
    // none, and a turn then costs no iterator.
    if (this.pendingCalls.size > 0) {
      for (const [id, call] of this.pendingCalls) {
        if (this.awaitingApproval.has(id) || this.suspendedCalls.has(id)) continue
        if (!this.announced.delete(id)) this.emit(call)
        this.pendingCalls.delete(id)
      }
    }
    // Even right after an aborted tool result's own interrupt: the turn was interrupted too.
    if (this.turnAborted) this.emit({ type: 'interrupt', sessionId: this.sessionId, timestamp })
    this.emit({ type: 'turn_end', sessionId: this.sessionId, timestamp })
    this.turnOpen = false
    this.turnAborted = false
  }
}

/** True unless another tool result follows before the turn can end (records in between are skipped). */
function isLastInTurn(history: readonly HistoryEvent[], index: number): boolean {
  for (let i = index + 1; i < history.length; i++) {
    const next = history[i]!
    if ('role' in next) return next.role !== 'tool'
    if (next.type === 'task_metadata') return true
  }
  return true
}
