import type { ToolCallPart, ToolResultMessage, ToolResultUiExtra } from '@kode/protocol'
import { cutText } from '@kode/protocol/helpers'
import { linkedSessions } from '../replay/linked-sessions.js'
import type { MarkdownRenderer } from './markdown.js'
import { prettyJson } from './pretty-json.js'
import { type ImageRendering, renderDetails, renderImage } from './render-parts.js'
import { html, type SafeHtml } from './safe-html.js'

const PREVIEW_CHARS = 100

/** What a tool block needs besides the call and its result. */
export interface ToolRenderContext extends ImageRendering {
  markdown: MarkdownRenderer
  /**
   * The block of a linked sub-agent session's nested transcript: a slot, filled once the
   * transcript is rendered (empty when it is not available, or nested elsewhere).
   */
  subSession(sessionId: string): SafeHtml
  /**
   * The sub-agent sessions that paused for approval inside call `toolCallId`, as the session's
   * approval requests link them before the call's result (which may link nothing: a denial).
   */
  pausedSessions(toolCallId: string): readonly string[]
}

/**
 * One tool call and its result as a collapsible block: the summary names the tool, previews the
 * arguments and marks a failed, interrupted or missing result; the body holds the full arguments
 * (pretty-printed when they are JSON), the output, images, the tool's UI extra and the nested
 * sub-agent session.
 */
export function renderToolCall(
  call: ToolCallPart | undefined,
  result: ToolResultMessage | undefined,
  context: ToolRenderContext,
): SafeHtml {
  const name = call?.name ?? result?.toolName ?? 'tool'
  const state = result ? result.status : 'missing'
  const badge =
    state === 'success' ? '' : html` <span class="badge ${state}">${badgeText(state, call)}</span>`
  const preview = call ? html` <code>${oneLine(call.argumentsJson)}</code>` : ''
  const callId = call?.id ?? result?.toolCallId
  const linked = new Set([
    ...(result ? linkedSessions(result) : []),
    ...(callId !== undefined ? context.pausedSessions(callId) : []),
  ])
  const nested = [...linked].map((sessionId) => context.subSession(sessionId))
  const body = html`${call ? html`<p class="label">Arguments</p><pre>${prettyJson(call.argumentsJson)}</pre>` : ''}${
    result ? renderResult(result, context) : html`<p class="label">No result was recorded.</p>`
  }${nested}`
  return renderDetails(`tool ${state}`, html`<span class="tool-name">${name}</span>${preview}${badge}`, body)
}

function renderResult(result: ToolResultMessage, context: ToolRenderContext): SafeHtml {
  return html`<p class="label">Result</p><pre>${result.outputText}</pre>${result.parts.map((part) =>
    renderImage(part, context),
  )}${result.uiExtra ? renderUiExtra(result.uiExtra, context.markdown) : ''}`
}

function renderUiExtra(extra: ToolResultUiExtra, markdown: MarkdownRenderer): SafeHtml | string {
  switch (extra.type) {
    case 'diff':
      return html`<p class="label">Diff${extra.path ? html` of <code>${extra.path}</code>` : ''}</p><pre>${extra.diff}</pre>`
    case 'todo_list':
      return html`<p class="label">Todos</p><ul class="todos">${extra.todos.map(
        (todo) => html`<li>[${todo.status}] ${todo.content}</li>`,
      )}</ul>`
    case 'markdown':
      return html`<p class="label">Notes</p>${markdown(extra.markdown)}`
    case 'json':
      return html`<p class="label">Data</p><pre>${JSON.stringify(extra.value, null, 2) ?? 'undefined'}</pre>`
    case 'session':
      return ''
    default: {
      const unknown: never = extra
      void unknown
      return ''
    }
  }
}

function badgeText(state: ToolResultMessage['status'] | 'missing', call: ToolCallPart | undefined): string {
  if (state === 'missing') return call?.incomplete ? 'not run' : 'no result'
  return state === 'aborted' ? 'interrupted' : state
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ')
  return cutText(flat, PREVIEW_CHARS)
}
