import {
  type AssistantMessage,
  type CompactionAttempt,
  type DeveloperMessage,
  type HistoryEvent,
  isRefusal,
  joinText,
  type ToolResultMessage,
  type UserMessage,
} from '@kode/protocol'
import { HeldRecords } from '../held-records.js'
import type { SubSessionHistories } from '../replay/derive-replay.js'
import { formatCost, formatDuration, formatTime, formatUsage } from './format.js'
import type { MarkdownRenderer } from './markdown.js'
import {
  nestSubSessions,
  type OwnTranscript,
  type RenderedTranscript,
  SlotLinks,
  TotalsLog,
} from './nested-sessions.js'
import {
  type ImageRendering,
  renderCitations,
  renderDetails,
  renderImage,
  renderServerTool,
  renderText,
} from './render-parts.js'
import { renderToolCall, type ToolRenderContext } from './render-tool.js'
import { html, type SafeHtml } from './safe-html.js'

/** Shared by a transcript and the sub-agent transcripts nested in it. */
export interface TranscriptContext extends ImageRendering {
  subSessions: SubSessionHistories
  /** Renders the assistant's text and tools' markdown notes. */
  markdown: MarkdownRenderer
  /** Sessions already rendered, so a link cycle cannot recurse forever. */
  seen: Set<string>
}

export type { RenderedTranscript } from './nested-sessions.js'

/**
 * Renders one session's history in order. Tool results are shown inside the assistant message
 * whose call they answer; a result that answers no call is shown on its own.
 */
export function renderTranscript(
  history: readonly HistoryEvent[],
  context: TranscriptContext,
): RenderedTranscript {
  const renderer = new TranscriptRenderer(context)
  renderer.push(history)
  return renderer.end()
}

/**
 * Renders a history pushed in batches, exactly as `renderTranscript` renders the whole: an
 * assistant message is held (with the records after it) until every call it makes has its result,
 * or the history ends, since the results are shown inside it. The sub-agent sessions it links are
 * rendered at the end, each on its own, and nested into their slots (see `nestSubSessions`).
 */
export class TranscriptRenderer {
  private readonly totals = new TotalsLog()
  private readonly slots = new SlotLinks()
  private readonly blocks: SafeHtml[] = []
  /** The first result of each call, among the records pushed so far. */
  private readonly results = new Map<string, ToolResultMessage>()
  private readonly shown = new Set<ToolResultMessage>()
  /**
   * The sub-agent sessions each call's approval requests link before its first result (a
   * sub-agent that paused inside it), in order: shown with the call like the ones its result links.
   */
  private readonly paused = new Map<string, string[]>()
  private readonly tools: ToolRenderContext
  /** Records pushed and not rendered yet, in order. */
  private readonly held = new HeldRecords((records, ended) => this.drain(records, ended))
  /** How the task in progress ended so far: its closing notice says interrupted or failed. */
  private ending: 'finished' | 'interrupted' | 'failed' = 'finished'

  constructor(private readonly context: TranscriptContext) {
    this.tools = {
      resolveImage: context.resolveImage,
      imageUrls: context.imageUrls,
      markdown: context.markdown,
      subSession: (sessionId) => this.slots.slotFor(sessionId, this.totals),
      pausedSessions: (toolCallId) => this.paused.get(toolCallId) ?? [],
    }
  }

  /** Takes the next records of the history and renders those it can. */
  push(records: readonly HistoryEvent[]): void {
    for (const event of records) {
      if ('role' in event) {
        if (event.role === 'tool' && !this.results.has(event.toolCallId))
          this.results.set(event.toolCallId, event)
      } else if (event.type === 'approval_request' && event.subAgentCall) {
        // Only before the call's result, as a call is rendered once its result has come.
        const { toolCallId, sessionId } = event.subAgentCall
        if (this.results.has(toolCallId)) continue
        const sessions = this.paused.get(toolCallId) ?? []
        if (!sessions.includes(sessionId)) this.paused.set(toolCallId, [...sessions, sessionId])
      }
    }
    this.held.push(records)
  }

  /** Ends the history: renders what was held and returns the markup and the usage totals. */
  end(): RenderedTranscript {
    const { context } = this
    return nestSubSessions(this.endOwn(), {
      subSessions: context.subSessions,
      seen: context.seen,
      renderOwn: (history) => {
        const renderer = new TranscriptRenderer(context)
        renderer.push(history)
        return renderer.endOwn()
      },
    })
  }

  /** Ends the history: its own markup, with a slot for each sub-agent session it links. */
  private endOwn(): OwnTranscript {
    this.held.end()
    return { markup: html`${this.blocks}`, totals: this.totals, links: this.slots.links }
  }

  /** Renders `records` in order until one must wait; returns its index (the length when none). */
  private drain(records: readonly HistoryEvent[], ended: boolean): number {
    for (let i = 0; i < records.length; i++) {
      const event = records[i]!
      if (!ended && 'role' in event && event.role === 'assistant' && !this.answered(event)) return i
      this.render(event)
    }
    return records.length
  }

  /** Whether every call of an assistant message has its result among the records so far. */
  private answered(message: AssistantMessage): boolean {
    for (const part of message.parts)
      if (part.type === 'tool_call' && !this.results.has(part.id)) return false
    return true
  }

  /**
   * A compaction that saved nothing: a notice saying why. It ends nothing (the turn went on with the
   * whole context; an interrupted task has its own record).
   */
  private unsavedCompaction(attempt: CompactionAttempt, why: string): void {
    // A summary a model answered counts like a saved one's: its task's accounting counted it.
    this.totals.add(attempt.usage, attempt.costUsd)
    this.retryNotices(attempt.retries)
    const title = `Context not compacted (${attempt.reason}, about ${attempt.tokensBefore} tokens). ${why}`
    this.blocks.push(html`<div class="notice compaction">${title}</div>`)
  }

  /**
   * The notices of a summary request's retries, before its compaction's own notice: shown as a
   * turn's retries are, and like them they fail nothing.
   */
  private retryNotices(retries: readonly string[] | undefined): void {
    for (const notice of retries ?? [])
      this.blocks.push(html`<div class="notice error">Error: ${notice} (retryable)</div>`)
  }

  private render(event: HistoryEvent): void {
    if (!('role' in event)) {
      switch (event.type) {
        case 'error':
          if (event.compaction) {
            this.unsavedCompaction(event.compaction, event.message)
            break
          }
          // A call that failed before any text still cost what its provider reported.
          this.totals.add(event.usage, event.costUsd)
          if (!event.canRetry && this.ending === 'finished') this.ending = 'failed'
          this.blocks.push(
            html`<div class="notice error">Error: ${event.message}${event.canRetry ? ' (retryable)' : ''}</div>`,
          )
          break
        case 'interrupt':
          if (event.compaction) {
            this.unsavedCompaction(event.compaction, 'The user interrupted the summary.')
            break
          }
          this.totals.add(event.usage, event.costUsd)
          this.ending = 'interrupted'
          this.blocks.push(html`<div class="notice interrupt">Interrupted by the user</div>`)
          break
        case 'task_metadata': {
          const main = event.metadata.main
          const parts = [`Task ${this.ending}`]
          if (main.turnCount !== undefined)
            parts.push(`${main.turnCount} turn${main.turnCount === 1 ? '' : 's'}`)
          if (main.usage) parts.push(formatUsage(main.usage))
          if (main.usage || main.costUsd !== undefined) parts.push(formatCost(main.costUsd))
          if (main.durationMs !== undefined) parts.push(formatDuration(main.durationMs))
          this.blocks.push(html`<div class="notice task ${this.ending}">${parts.join(' · ')}</div>`)
          this.ending = 'finished'
          break
        }
        case 'compaction': {
          this.totals.add(event.usage, event.costUsd)
          this.retryNotices(event.retries)
          const title = `Context compacted (${event.reason}): about ${event.tokensBefore} → ${event.tokensAfter} tokens; the model saw this summary instead of everything above`
          this.blocks.push(
            html`<div class="notice compaction">${renderDetails('compaction-summary', title, renderText(event.summary))}</div>`,
          )
          break
        }
        case 'approval_request':
          this.blocks.push(
            html`<div class="notice approval">Approval requested for ${event.toolName} <code>${event.arguments}</code>${
              event.sessionId !== undefined ? html` in sub-agent session <code>${event.sessionId}</code>` : ''
            }</div>`,
          )
          break
        case 'approval_decision':
          this.blocks.push(
            html`<div class="notice approval">${event.approved ? 'Approved' : 'Denied'} by the user: ${event.toolName}${
              event.reason !== undefined ? ` (${event.reason})` : ''
            }${event.sessionId !== undefined ? html` in sub-agent session <code>${event.sessionId}</code>` : ''}</div>`,
          )
          break
        case 'tool_progress':
          this.blocks.push(html`<div class="notice progress">${event.toolName}: ${event.message}</div>`)
          break
        default: {
          const unknown: never = event
          void unknown
        }
      }
      return
    }
    switch (event.role) {
      case 'system':
        this.blocks.push(renderDetails('system', 'System prompt', renderText(joinText(event.parts))))
        break
      case 'user':
        this.ending = 'finished'
        this.blocks.push(renderPrompt(event, this.context))
        break
      case 'developer':
        this.blocks.push(renderPrompt(event, this.context))
        break
      case 'assistant':
        if (event.stopReason === 'aborted') this.ending = 'interrupted'
        this.totals.add(event.usage, event.costUsd)
        this.blocks.push(renderAssistant(event, this.results, this.shown, this.tools))
        break
      case 'tool':
        if (event.status === 'aborted') this.ending = 'interrupted'
        if (!this.shown.has(event)) {
          this.shown.add(event)
          this.blocks.push(renderToolCall(undefined, event, this.tools))
        }
        break
      default: {
        const unknown: never = event
        void unknown
      }
    }
  }
}

/**
 * A user or developer message, shown as it was typed (never as markdown). A user message sent in
 * a mode shows the mode as a badge in its header and the mode's context above the text.
 */
function renderPrompt(message: UserMessage | DeveloperMessage, context: TranscriptContext): SafeHtml {
  const mode = message.role === 'user' ? message.mode : undefined
  const modeContext = message.role === 'user' ? message.modeContext : undefined
  return html`<section class="msg ${message.role}"><header>${message.role === 'user' ? 'User' : 'Developer'}${
    mode !== undefined ? html` <span class="badge mode">${mode} mode</span>` : ''
  }<time>${formatTime(message.createdAt)}</time></header>${
    modeContext ? html`<div class="mode-context">${renderText(modeContext)}</div>` : ''
  }${message.parts.map((part) =>
    part.type === 'text' ? renderText(part.text) : renderImage(part, context),
  )}</section>`
}

function renderAssistant(
  message: AssistantMessage,
  results: Map<string, ToolResultMessage>,
  shown: Set<ToolResultMessage>,
  tools: ToolRenderContext,
): SafeHtml {
  const body: SafeHtml[] = []
  let thinking = ''
  const flushThinking = () => {
    if (thinking) body.push(renderDetails('thinking', 'Thinking', renderText(thinking)))
    thinking = ''
  }
  for (const part of message.parts) {
    if (part.type === 'thinking_text') {
      thinking += part.text
      continue
    }
    flushThinking()
    switch (part.type) {
      case 'text':
        body.push(tools.markdown(part.text))
        if (part.citations?.length) body.push(renderCitations(part.citations))
        break
      case 'image_url':
      case 'image_file':
        body.push(renderImage(part, tools))
        break
      case 'tool_call': {
        const result = results.get(part.id)
        if (result) shown.add(result)
        body.push(renderToolCall(part, result, tools))
        break
      }
      case 'thinking_signature':
        // Its data is opaque (for the provider only), but a reader should know the model thought
        // here: Anthropic's redacted thinking has no text of its own.
        if (part.redacted === true)
          body.push(html`<p class="label thinking-redacted">Thinking redacted by the provider</p>`)
        break
      case 'server_tool':
        body.push(renderServerTool(part))
        break
      default: {
        const unknown: never = part
        void unknown
      }
    }
  }
  flushThinking()
  const aborted = message.stopReason === 'aborted'
  const failed = message.isApiError === true || message.stopReason === 'error'
  const facts = [message.model, message.usage && formatUsage(message.usage)]
  if (message.usage || message.costUsd !== undefined) facts.push(formatCost(message.costUsd))
  if (message.durationMs !== undefined) facts.push(formatDuration(message.durationMs))
  const summary = facts.filter(Boolean).join(' · ')
  // A refusal is no error, but the reader must see the model declined; the provider's explanation
  // (Anthropic's, Gemini's blocked prompt) is meant for the user.
  const refused = isRefusal(message)
  const explanation = message.stopDetails?.explanation
  const classes = `msg assistant${aborted ? ' aborted' : ''}${failed ? ' failed' : ''}`
  return html`<section class="${classes}"><header>Assistant${aborted ? html` <span class="badge aborted">interrupted</span>` : ''}${
    failed ? html` <span class="badge error">error</span>` : ''
  }${refused ? html` <span class="badge refused">refused</span>` : ''}<time>${formatTime(message.createdAt)}</time></header>${body}${
    explanation ? html`<div class="notice stop">${explanation}</div>` : ''
  }${
    failed && message.errorMessage ? html`<div class="notice error">${message.errorMessage}</div>` : ''
  }${summary ? html`<div class="usage">${summary}</div>` : ''}</section>`
}
