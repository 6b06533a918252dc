import type {
  AssistantMessage,
  AssistantPart,
  Citation,
  ImagePart,
  ProviderFields,
  StopDetails,
  StopReason,
  StreamItem,
  TextPart,
  ThinkingSignaturePart,
  ThinkingTextPart,
  ToolCallPart,
  Usage,
} from '@kode/protocol'
import type { Completion, ResponseBuilder, SignatureOptions, TextItem } from './adapter/spec.js'
import { finalMessage, type MessageStamps, type Outcome, settleToolCall } from './final-message.js'
import { Fifo } from './transport/fifo.js'
import {
  checkedCitation,
  checkedStopDetails,
  checkedUsage,
  isImage,
  isProviderFields,
  isStopReason,
  isText,
  optionalString,
} from './wire-values.js'

/** Who is answering; stamped on the final message. */
export type AccumulatorOptions = MessageStamps

export type { Outcome } from './final-message.js'

interface ToolCallState {
  part: ToolCallPart
  closed: boolean
  started: boolean
}

/**
 * The one accumulator. Adapters report deltas through {@link ResponseBuilder}; it queues the
 * stream items for the caller and keeps the parts of the final message in stream order. Part
 * objects are extended in place, so a delta costs its item and a string append.
 *
 * Adapters pass on what the server sent, and a broken or hostile server sends any type anywhere:
 * every value is checked here, once for all adapters, so the final message always fits the
 * history schema. A value of the wrong type counts as not sent.
 */
export class Accumulator implements ResponseBuilder {
  private readonly parts: AssistantPart[] = []
  /** The part the next delta of the same kind extends. */
  private open: TextPart | ThinkingTextPart | ThinkingSignaturePart | undefined
  /** The call each key names now: a new id under a known key starts a call that replaces it here. */
  private readonly calls = new Map<number | string, ToolCallState>()
  /** Every call of the response, replaced ones included, in stream order: all are settled at the end. */
  private readonly allCalls: ToolCallState[] = []
  /** The stream items not handed out yet; the transport takes from it in place (see `Fifo`). */
  readonly items = new Fifo<StreamItem>()
  private id: string | undefined
  private reported: Usage | undefined
  private readUsage: (() => Usage | undefined) | undefined
  /** What the mapping reports of the state it holds when the message is built (see `atEnd`). */
  private flush: ((out: ResponseBuilder) => void) | undefined
  private providerCost: number | undefined
  private rawStop: string | undefined
  private mappedStop: StopReason | undefined
  private stopDetails: StopDetails | undefined
  /** The model sent refusal text (see `refusal`). */
  private refused = false
  private fields: ProviderFields | undefined
  private terminal = false

  constructor(private readonly options: AccumulatorOptions) {}

  // -- ResponseBuilder: what adapters call --------------------------------------------------

  responseId(id: string | null | undefined, options?: { final?: boolean }): void {
    // Called for every chunk on some wires: the common case (an id is kept already) returns first.
    if (this.id !== undefined && options === undefined) return
    if (isText(id) && (this.id === undefined || options?.final)) this.id = id
  }

  // `text` and `thinking` run once per delta: their common case (the open part grows) and the
  // queueing of the item are written out in place rather than through helpers, which a cold JIT
  // pays a call each for.
  refusal(delta: string, item?: TextItem): void {
    if (typeof delta === 'string' && delta !== '') this.refused = true
    this.text(delta, item)
  }

  text(delta: string, item?: TextItem): void {
    if (typeof delta !== 'string' || delta === '') return
    const open = this.open
    let itemId: string | undefined
    let phase: string | undefined
    if (item !== undefined && item !== null) {
      itemId = item.itemId
      phase = item.phase
      // A hostile value is dropped with the whole item, as if none was given. (`optionalString`,
      // written out: this runs for every delta of a wire that names its items.)
      if (
        !(
          (itemId === undefined || typeof itemId === 'string') &&
          (phase === undefined || typeof phase === 'string')
        )
      )
        itemId = phase = undefined
    }
    if (open !== undefined && open.type === 'text' && open.itemId === itemId && open.phase === phase)
      open.text += delta
    else {
      const part: TextPart = { type: 'text', text: delta }
      if (itemId !== undefined) part.itemId = itemId
      if (phase !== undefined) part.phase = phase
      this.openPart(part)
    }
    const id = this.id
    const items = this.items
    items.slots[items.size++] =
      id === undefined
        ? { type: 'text_delta', text: delta }
        : { type: 'text_delta', text: delta, responseId: id }
  }

  thinking(delta: string): void {
    if (typeof delta !== 'string' || delta === '') return
    const open = this.open
    if (open !== undefined && open.type === 'thinking_text') open.text += delta
    else this.openPart({ type: 'thinking_text', text: delta })
    const id = this.id
    const items = this.items
    items.slots[items.size++] =
      id === undefined
        ? { type: 'thinking_delta', text: delta }
        : { type: 'thinking_delta', text: delta, responseId: id }
  }

  citations(citations: readonly Citation[], item?: TextItem, options?: { open?: boolean }): void {
    if (!Array.isArray(citations)) return
    const checked: Citation[] = []
    for (const citation of citations) {
      const kept = checkedCitation(citation)
      if (kept !== undefined) checked.push(kept)
    }
    if (checked.length === 0) return
    const part = this.citedPart(item, options?.open === true)
    if (part.citations === undefined) part.citations = checked
    else for (const citation of checked) part.citations.push(citation)
  }

  signature(signature: string, options: SignatureOptions): void {
    if (!isText(signature)) return
    if (!optionalString(options.itemId)) options = { ...options, itemId: undefined }
    const open = this.open
    if (
      open?.type === 'thinking_signature' &&
      open.format === options.format &&
      open.itemId === options.itemId &&
      !options.redacted &&
      !open.redacted
    ) {
      open.signature += signature
      return
    }
    const part: ThinkingSignaturePart = {
      type: 'thinking_signature',
      signature,
      format: options.format,
      model: this.options.model,
    }
    if (options.itemId !== undefined) part.itemId = options.itemId
    if (options.redacted) part.redacted = true
    this.openPart(part)
  }

  image(part: ImagePart): void {
    if (!isImage(part)) return
    this.parts.push(part)
    this.open = undefined
    this.emit(
      this.id === undefined
        ? { type: 'image_delta', part }
        : { type: 'image_delta', part, responseId: this.id },
    )
  }

  toolCall(
    key: number | string,
    id: string | null | undefined,
    name: string | null | undefined,
    itemId?: string,
  ): void {
    if (!isText(id)) id = undefined
    if (!isText(name)) name = undefined
    if (!isText(itemId)) itemId = undefined
    let call = this.calls.get(key)
    if (call && id && call.part.id && id !== call.part.id) {
      // The server moved on to another call under the same key: the one before is whole.
      call.closed = true
      call = undefined
    }
    if (!call) {
      call = this.startCall(key)
    }
    if (id && !call.part.id) call.part.id = id
    if (name && !call.part.name) call.part.name = name
    if (itemId && call.part.itemId === undefined) call.part.itemId = itemId
    if (!call.started && call.part.id && call.part.name) this.announce(call)
  }

  toolCallArgs(key: number | string, json: string): void {
    if (!isText(json)) return
    const call = this.calls.get(key) ?? this.startCall(key)
    call.part.argumentsJson += json
  }

  toolCallFields(key: number | string, fields: ProviderFields): void {
    if (!isProviderFields(fields)) return
    const call = this.calls.get(key) ?? this.startCall(key)
    call.part.providerFields = { format: fields.format, fields: { ...fields.fields } }
  }

  responseFields(fields: ProviderFields): void {
    if (!isProviderFields(fields)) return
    const earlier = this.fields?.format === fields.format ? this.fields.fields : {}
    this.fields = { format: fields.format, fields: { ...earlier, ...fields.fields } }
  }

  endBlock(key?: number | string): void {
    this.open = undefined
    if (key === undefined) return
    const call = this.calls.get(key)
    if (call) call.closed = true
  }

  serverTool(format: string, block: { type: string }): void {
    if (!isText(format) || typeof block !== 'object' || block === null || !isText(block.type)) return
    this.parts.push({ type: 'server_tool', format, block })
    this.open = undefined
  }

  closeToolCalls(): void {
    for (const call of this.allCalls) call.closed = true
  }

  usage(usage: Usage): void {
    this.reported = usage
    this.readUsage = undefined
  }

  usageFrom(read: () => Usage | undefined): void {
    this.readUsage = read
  }

  atEnd(flush: (out: ResponseBuilder) => void): void {
    this.flush = typeof flush === 'function' ? flush : undefined
  }

  costUsd(usd: number): void {
    if (Number.isFinite(usd) && usd >= 0) this.providerCost = usd
  }

  stop(raw: string, reason: StopReason | undefined, details?: StopDetails): void {
    if (typeof raw !== 'string') return
    this.rawStop = raw
    this.mappedStop = isStopReason(reason) ? reason : undefined
    this.stopDetails = checkedStopDetails(details)
  }

  complete(): void {
    this.terminal = true
  }

  // -- what the transport calls -------------------------------------------------------------

  /** The next queued stream item, if any. */
  take(): StreamItem | undefined {
    return this.items.take()
  }

  /** The response reported usage: the provider billed it, whatever happens next. */
  hasUsage(): boolean {
    return this.checkedUsage() !== undefined
  }

  /** Nothing came back: no part and no stop reason (a wire Kode misread, or a server's hiccup). */
  isEmpty(): boolean {
    return this.parts.length === 0 && this.rawStop === undefined
  }

  /** The provider said the response is over, the way its wire says it. */
  isComplete(completesOn: Completion): boolean {
    switch (completesOn) {
      case 'terminal_event':
        return this.terminal
      case 'stop_reason':
        return this.terminal || this.rawStop !== undefined
      default: {
        const unknown: never = completesOn
        throw new TypeError(`unknown completion ${String(unknown)}`)
      }
    }
  }

  /**
   * Builds the final message. `complete` and `aborted` also queue the `done` item (`complete`
   * first announces tool calls that never got both id and name); `aborted` drops deltas the
   * caller has not taken. Tool calls whose arguments did not close are marked `incomplete`.
   */
  finish(outcome: Outcome, errorMessage?: string): AssistantMessage {
    this.flushHeld()
    if (outcome === 'aborted') this.items.clear()
    for (const call of this.allCalls) this.settle(call, outcome === 'complete')
    const reported = {
      responseId: this.id,
      providerFields: this.fields,
      usage: this.checkedUsage(),
      providerCost: this.providerCost,
      rawStop: this.rawStop,
      mappedStop: this.mappedStop,
      stopDetails: this.stopDetails ?? (this.refused ? { category: 'refusal' } : undefined),
    }
    const message = finalMessage(this.parts, reported, this.options, outcome, errorMessage)
    if (outcome !== 'error') this.emit({ type: 'done', message })
    return message
  }

  /**
   * The usage last reported, its counts checked here rather than on every report (some wires
   * repeat them on every chunk). A read that reports nothing falls back to the last `usage`.
   */
  private checkedUsage(): Usage | undefined {
    return checkedUsage(this.readUsageSafely() ?? this.reported)
  }

  /**
   * What the `usageFrom` reader returns. It runs when the message is built, outside any event's
   * mapping, so a reader that trips on what the server sent counts as reporting nothing, as
   * `undefined` does, rather than failing a response whose content has all arrived.
   */
  private readUsageSafely(): Usage | undefined {
    try {
      return this.readUsage?.()
    } catch {
      return undefined
    }
  }

  /**
   * Runs the mapping's `atEnd` flush, once. It runs outside any event's mapping, so a flush that
   * trips on what the server sent counts as reporting nothing more, as a throwing usage reader
   * does, rather than failing a response whose content has all arrived.
   */
  private flushHeld(): void {
    const flush = this.flush
    if (flush === undefined) return
    this.flush = undefined
    try {
      flush(this)
    } catch {
      // Nothing more to report.
    }
  }

  /** Settles a call at the end; announces it when the response completed and it never was. */
  private settle(call: ToolCallState, completed: boolean): void {
    const limit = this.mappedStop === 'length'
    settleToolCall(call.part, call.closed, !completed || limit, this.options.createId, limit)
    if (completed && !call.started && call.part.name) this.announce(call)
  }

  private startCall(key: number | string): ToolCallState {
    const part: ToolCallPart = { type: 'tool_call', id: '', name: '', argumentsJson: '' }
    const call = { part, closed: false, started: false }
    this.calls.set(key, call)
    this.allCalls.push(call)
    this.parts.push(part)
    this.open = undefined
    return call
  }

  private announce(call: ToolCallState): void {
    call.started = true
    const { id, name } = call.part
    this.emit(
      this.id === undefined
        ? { type: 'tool_call_start', toolCallId: id, toolName: name }
        : { type: 'tool_call_start', toolCallId: id, toolName: name, responseId: this.id },
    )
  }

  private emit(item: StreamItem): void {
    this.items.push(item)
  }

  /**
   * The text part citations belong to (see `citations`). With `open`, they cite the text being
   * written: a part of their own, left open for that text when it has not begun.
   */
  private citedPart(item: TextItem | undefined, open: boolean): TextPart {
    const current = this.open
    const itemId = item !== undefined && item !== null && isText(item.itemId) ? item.itemId : undefined
    if (current?.type === 'text' && (itemId === undefined || current.itemId === itemId)) return current
    if (!open)
      for (let i = this.parts.length - 1; i >= 0; i--) {
        const part = this.parts[i]!
        if (part.type === 'text' && (itemId === undefined || part.itemId === itemId)) return part
      }
    const part: TextPart = { type: 'text', text: '' }
    if (itemId !== undefined) part.itemId = itemId
    if (open) this.openPart(part)
    else this.parts.push(part)
    return part
  }

  private openPart(part: TextPart | ThinkingTextPart | ThinkingSignaturePart): void {
    this.parts.push(part)
    this.open = part
  }
}
