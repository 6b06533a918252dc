import type { Event, TaskMetadataSummary, UsageEvent } from '@kode/protocol'
import { argumentSummary, clip, resultPreview, sourcesOf, subAgentTotals, thinkingHeader } from './format.js'
import { noticeText } from './notices.js'
import type { RenderCommand } from './render-commands.js'
import { markdownLines, TextStream } from './text-stream.js'

/** The display states of one session. */
export type DisplayState = 'IDLE' | 'THINKING' | 'STREAMING_TEXT' | 'TOOL_EXECUTING' | 'ERROR'

/** Whether a session is the one the user talks to, or a sub-agent's (shown as status lines). */
export type SessionRole =
  | { kind: 'main' }
  | { kind: 'sub_agent'; name: string; description?: string; color: number }

/** Where an event comes from: a running task, or the replay of a persisted session. */
export type EventOrigin = 'live' | 'replay'

interface RunningTool {
  name: string
  summary: string
  startedAt: number
}

/**
 * The display of one session: events in, render commands out. Pure: it holds the session's
 * streaming state (open thinking and text, running tools, usage waiting for its context figure)
 * and never touches a terminal. Only the main session streams text; a sub-agent's session turns
 * into compact status lines. Unknown event types produce nothing.
 */
export class DisplayStateMachine {
  readonly sessionId: string
  #role: SessionRole
  #state: DisplayState = 'IDLE'
  #thinking: { text: string; startedAt: number } | undefined
  #text: TextStream | undefined
  #tools = new Map<string, RunningTool>()
  #usage: UsageEvent | undefined
  #metadata: TaskMetadataSummary | undefined
  #lastType: string | undefined

  constructor(sessionId: string, role: SessionRole) {
    this.sessionId = sessionId
    this.#role = role
  }

  get state(): DisplayState {
    return this.#state
  }

  get role(): SessionRole {
    return this.#role
  }

  /** Names the session's role once it is known (a sub-agent's `task_start`). */
  setRole(role: SessionRole): void {
    this.#role = role
  }

  /** Turns one event of this session into what to render. */
  handle(event: Event, origin: EventOrigin = 'live'): RenderCommand[] {
    const out: RenderCommand[] = []
    // A usage line waits for the context figure that follows it; anything else flushes it.
    // A response's usage waits for its measured context figure (not for the estimate before a call).
    const measuredContext = event.type === 'context_usage' && !event.estimated
    if (this.#usage && !measuredContext) out.push(...this.#flushUsage(undefined))
    // In a replay, an aborted tool result and its aborted turn each end with an interrupt, back to
    // back. The user interrupted once, so the notice shows once.
    const repeated = event.type === 'interrupt' && this.#lastType === 'interrupt'
    this.#lastType = event.type
    if (repeated) return out
    if (this.#role.kind === 'main') this.#main(event, origin, out)
    else this.#subAgent(event, this.#role, out)
    return out
  }

  #main(event: Event, origin: EventOrigin, out: RenderCommand[]): void {
    const sessionId = this.sessionId
    switch (event.type) {
      case 'welcome':
        out.push({
          type: 'welcome',
          sessionId,
          workDir: event.workDir,
          model: event.model,
          provider: event.provider,
        })
        return
      case 'user_message':
        if (origin === 'replay') out.push({ type: 'user_prompt', sessionId, text: event.content })
        return
      case 'developer_message':
        if (origin === 'replay') out.push({ type: 'notice', sessionId, text: noticeText(event) })
        return
      case 'task_start':
      case 'turn_start':
        if (this.#state === 'ERROR') this.#state = 'IDLE'
        return
      case 'thinking_start':
        this.#thinking = { text: '', startedAt: event.timestamp }
        this.#state = 'THINKING'
        out.push({ type: 'thinking_start', sessionId })
        return
      case 'thinking_delta':
        if (this.#thinking) this.#thinking.text += event.content
        out.push({ type: 'thinking_delta', sessionId, text: event.content })
        return
      case 'thinking_end': {
        const thinking = this.#thinking
        this.#thinking = undefined
        this.#state = 'IDLE'
        const text = thinking?.text ?? ''
        const durationMs = thinking ? event.timestamp - thinking.startedAt : undefined
        out.push({ type: 'thinking_end', sessionId, header: thinkingHeader(text), text, durationMs })
        return
      }
      case 'assistant_text_start':
        this.#text = new TextStream()
        this.#state = 'STREAMING_TEXT'
        return
      case 'assistant_text_delta': {
        this.#text ??= new TextStream()
        for (const line of this.#text.push(event.content)) out.push({ type: 'text_line', sessionId, line })
        out.push({ type: 'text_partial', sessionId, text: this.#text.partial })
        return
      }
      case 'assistant_text_end':
        for (const line of this.#text?.end() ?? []) out.push({ type: 'text_line', sessionId, line })
        out.push({ type: 'text_partial', sessionId, text: '' })
        this.#text = undefined
        this.#state = 'IDLE'
        return
      case 'assistant_image_delta':
        out.push({ type: 'image', sessionId, ref: clip(event.filePath ?? event.url ?? '', 80) })
        return
      case 'response_complete':
        // Live, the deltas have shown it all; a replay has only this snapshot to show.
        if (origin === 'replay') {
          if (event.thinkingText) {
            const text = event.thinkingText
            out.push({ type: 'thinking_end', sessionId, header: thinkingHeader(text), text })
          }
          for (const line of markdownLines(event.content)) out.push({ type: 'text_line', sessionId, line })
        }
        if (event.citations) out.push({ type: 'sources', sessionId, sources: sourcesOf(event.citations) })
        return
      case 'tool_call_start':
        if (origin === 'live')
          out.push({
            type: 'tool_pending',
            sessionId,
            toolCallId: event.toolCallId,
            toolName: event.toolName,
          })
        return
      case 'tool_call': {
        const summary = argumentSummary(event.arguments)
        this.#tools.set(event.toolCallId, { name: event.toolName, summary, startedAt: event.timestamp })
        this.#state = 'TOOL_EXECUTING'
        out.push({
          type: 'tool_start',
          sessionId,
          toolCallId: event.toolCallId,
          toolName: event.toolName,
          summary,
        })
        return
      }
      case 'tool_progress':
        out.push({ type: 'tool_progress', sessionId, toolCallId: event.toolCallId, message: event.message })
        return
      case 'tool_approval_request':
      case 'tool_approval_decision':
      case 'compaction_start':
      case 'compaction_end':
        out.push({ type: 'notice', sessionId, text: noticeText(event) })
        return
      case 'tool_result': {
        const running = this.#tools.get(event.toolCallId)
        this.#tools.delete(event.toolCallId)
        if (this.#tools.size === 0 && this.#state === 'TOOL_EXECUTING') this.#state = 'IDLE'
        out.push({
          type: 'tool_done',
          sessionId,
          toolCallId: event.toolCallId,
          toolName: event.toolName,
          summary: running?.summary ?? '',
          status: event.status,
          preview: resultPreview(event.result),
          durationMs: running && origin === 'live' ? event.timestamp - running.startedAt : undefined,
        })
        return
      }
      case 'todo_change':
        out.push({ type: 'todo_list', sessionId, todos: event.todos })
        return
      case 'usage':
        this.#usage = event
        return
      case 'context_usage':
        // The usage line shows what the response measured; the estimate before a call adds nothing to it.
        if (event.estimated) return
        out.push(...this.#flushUsage({ percent: event.contextPercent, window: event.contextWindow }))
        return
      case 'task_metadata':
        this.#metadata = event.metadata
        return
      case 'task_finish':
        this.#tools.clear()
        if (this.#state !== 'ERROR') this.#state = 'IDLE'
        out.push({ type: 'task_end', sessionId, reason: event.reason, metadata: this.#takeMetadata() })
        return
      case 'error':
        if (!event.canRetry) this.#state = 'ERROR'
        out.push({ type: 'error', sessionId, message: event.errorMessage, canRetry: event.canRetry })
        return
      case 'interrupt':
        this.#closeStreams()
        out.push({ type: 'interrupt', sessionId })
        return
      case 'turn_end':
      case 'end':
      case 'replay_history':
        return
      default:
        ignore(event)
    }
  }

  #subAgent(event: Event, role: Extract<SessionRole, { kind: 'sub_agent' }>, out: RenderCommand[]): void {
    const status = (tone: 'start' | 'ok' | 'error' | 'done', text: string) =>
      out.push({
        type: 'sub_agent_status',
        sessionId: this.sessionId,
        name: role.name,
        color: role.color,
        tone,
        text,
      })
    switch (event.type) {
      case 'task_start':
        status('start', role.description ?? 'started')
        return
      case 'thinking_start':
        this.#state = 'THINKING'
        return
      case 'assistant_text_start':
        this.#state = 'STREAMING_TEXT'
        return
      case 'thinking_end':
      case 'assistant_text_end':
        this.#state = 'IDLE'
        return
      case 'tool_call':
        this.#tools.set(event.toolCallId, {
          name: event.toolName,
          summary: argumentSummary(event.arguments, 50),
          startedAt: event.timestamp,
        })
        this.#state = 'TOOL_EXECUTING'
        return
      case 'tool_result': {
        const running = this.#tools.get(event.toolCallId)
        this.#tools.delete(event.toolCallId)
        if (this.#tools.size === 0) this.#state = 'IDLE'
        const what = `${event.toolName} ${running?.summary ?? ''}`.trim()
        status(event.status === 'success' ? 'ok' : 'error', `${what} → ${resultPreview(event.result, 50)}`)
        return
      }
      case 'task_metadata':
        this.#metadata = event.metadata
        return
      case 'task_finish': {
        const totals = subAgentTotals(this.#takeMetadata()?.main)
        const reason = event.reason && event.reason !== 'completed' ? event.reason : 'done'
        this.#state = 'IDLE'
        status(reason === 'done' ? 'done' : 'error', totals ? `${reason} · ${totals}` : reason)
        return
      }
      case 'error':
        if (!event.canRetry) {
          this.#state = 'ERROR'
          status('error', event.errorMessage)
        }
        return
      case 'interrupt':
        this.#closeStreams()
        status('error', 'interrupted')
        return
      default:
        // Sub-agents stream nothing to the terminal; their other events only move the state.
        return
    }
  }

  #flushUsage(context: { percent: number; window?: number } | undefined): RenderCommand[] {
    const usage = this.#usage
    this.#usage = undefined
    if (!usage || this.#role.kind !== 'main') return []
    const command: RenderCommand = { type: 'usage', sessionId: this.sessionId, usage: usage.usage }
    if (usage.costUsd !== undefined) command.costUsd = usage.costUsd
    if (context) command.context = context
    return [command]
  }

  #takeMetadata(): TaskMetadataSummary | undefined {
    const metadata = this.#metadata
    this.#metadata = undefined
    return metadata
  }

  #closeStreams(): void {
    this.#thinking = undefined
    this.#text = undefined
    this.#tools.clear()
    this.#state = 'IDLE'
  }
}

/** Compile-time exhaustiveness, run-time tolerance: an event type from a newer producer shows nothing. */
function ignore(event: never): void {
  void event
}
