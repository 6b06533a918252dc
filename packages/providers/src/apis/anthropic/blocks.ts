import type { Citation } from '@kode/protocol'
import type { ResponseBuilder } from '../../adapter/spec.js'
import { citationOf } from '../shared/citations.js'

/** A content block as the Messages API sends it; every field may be missing or of another type. */
export type ContentBlock = { type?: unknown } & Record<string, unknown>

/**
 * Blocks of tools Anthropic runs itself: the call (`server_tool_use`, `mcp_tool_use`) and every
 * result (`web_search_tool_result`, `web_fetch_tool_result`, `code_execution_tool_result`,
 * `bash_code_execution_tool_result`, `text_editor_code_execution_tool_result`,
 * `tool_search_tool_result`, `mcp_tool_result`, and result types added later), plus
 * `container_upload`. They are kept whole as `server_tool` parts, never run as client calls.
 */
export function isServerBlock(type: string): boolean {
  return (
    type === 'server_tool_use' ||
    type === 'mcp_tool_use' ||
    type === 'container_upload' ||
    type.endsWith('_tool_result')
  )
}

/** Server calls whose `input` may stream as `input_json_delta` like a client call's. */
function streamsInput(type: string): boolean {
  return type === 'server_tool_use' || type === 'mcp_tool_use'
}

/** A server block being streamed: its start, and the input JSON so far. */
export interface OpenServerBlock {
  block: ContentBlock
  json: string
}

/**
 * Content blocks as they arrive: whole (in `message_start`, or complete in `content_block_start`)
 * or started and filled by deltas. Keyed by the block's index. Client `tool_use` blocks go to the
 * builder's tool calls (their other fields, such as a programmatic call's `caller`, kept to go
 * back), except the structured-output tool's, whose input is answer text; server blocks are held
 * until their stop, then kept whole.
 */
export class AnthropicBlocks {
  private readonly open = new Map<number, OpenServerBlock>()
  /** The blocks calling the structured-output tool, whose input is answer text. */
  private readonly answers = new Set<number>()
  private clientCalls = 0
  private readonly outputTool: string | undefined

  /** `outputTool`: the structured-output tool's name, when the request asked for one. */
  constructor(outputTool?: string) {
    this.outputTool = outputTool
  }

  /** The response called the structured-output tool and no other tool. */
  get answeredOnly(): boolean {
    return this.answers.size > 0 && this.clientCalls === 0
  }

  /** A block from `content_block_start` (`whole`: false) or `message_start` content (`whole`: true). */
  start(out: ResponseBuilder, index: number, block: unknown, whole: boolean): void {
    if (!isRecord(block) || typeof block.type !== 'string') return
    switch (block.type) {
      case 'text':
        if (typeof block.text === 'string') out.text(block.text)
        if (Array.isArray(block.citations)) {
          const citations: Citation[] = []
          for (const citation of block.citations as unknown[])
            if (isRecord(citation)) citations.push(anthropicCitation(citation))
          out.citations(citations, undefined, { open: true })
        }
        break
      case 'thinking':
        if (typeof block.thinking === 'string') out.thinking(block.thinking)
        if (typeof block.signature === 'string' && block.signature)
          out.signature(block.signature, { format: 'anthropic' })
        break
      case 'redacted_thinking':
        if (typeof block.data === 'string' && block.data)
          out.signature(block.data, { format: 'anthropic', redacted: true })
        break
      case 'tool_use': {
        if (this.outputTool !== undefined && block.name === this.outputTool) {
          this.answers.add(index)
          const input = block.input
          if (isRecord(input) && Object.keys(input).length > 0) out.text(JSON.stringify(input))
          break
        }
        this.clientCalls++
        out.toolCall(index, str(block.id), str(block.name))
        const fields = otherFields(block)
        if (fields) out.toolCallFields(index, { format: 'anthropic', fields })
        // Deltas normally carry the input; it may also come whole (a proxy, `message_start` content).
        const input = block.input
        if (isRecord(input) && Object.keys(input).length > 0) out.toolCallArgs(index, JSON.stringify(input))
        break
      }
      default:
        if (isServerBlock(block.type)) this.open.set(index, { block, json: '' })
        break
    }
    if (whole) this.stop(out, index)
  }

  /** `input_json_delta` for the block at `index`: a server call's input, else a client call's arguments. */
  inputJson(out: ResponseBuilder, index: number, json: string): void {
    const server = this.open.get(index)
    if (server) server.json += json
    else if (this.answers.has(index)) out.text(json)
    else out.toolCallArgs(index, json)
  }

  /**
   * `citations_delta` of the text block being written, kept on its text at once, whether that text
   * came before it or is still to come: a response that ends inside the block (cut, failed,
   * aborted) keeps it, as it keeps the text.
   */
  citation(out: ResponseBuilder, citation: unknown): void {
    if (isRecord(citation)) out.citations([anthropicCitation(citation)], undefined, { open: true })
  }

  /** `content_block_stop`: the block is whole; a server block is kept now. */
  stop(out: ResponseBuilder, index: number): void {
    const server = this.open.get(index)
    if (server) {
      this.open.delete(index)
      out.serverTool('anthropic', withInput(server))
    }
    out.endBlock(index)
  }
}

/**
 * A citation as Anthropic sends it (`web_search_result_location`, `char_location`,
 * `page_location`, `content_block_location`, `search_result_location`, and types added later):
 * its URL (a web page), title (a page's or a document's) and quoted text, and the whole citation
 * as sent (a search result's `source`, a document's index and range).
 */
function anthropicCitation(raw: ContentBlock): Citation {
  const title = str(raw.title) ?? raw.document_title
  return citationOf('anthropic', raw, { url: raw.url, title, citedText: raw.cited_text })
}

/** The server block with its streamed input parsed into `input` (a start-block `input` is a placeholder). */
function withInput({ block, json }: OpenServerBlock): { type: string } {
  const type = block.type as string
  if (!streamsInput(type) || json.trim() === '') return block as { type: string }
  // Throws on malformed JSON: the caller reports it as an invalid response.
  const whole: { type: string; input?: unknown } = { ...block, type }
  whole.input = JSON.parse(json) as unknown
  return whole
}

/** The fields a `tool_use` block we do not model (`caller`, and any added later), or none. */
function otherFields(block: ContentBlock): Record<string, unknown> | undefined {
  const { type: _type, id: _id, name: _name, input: _input, ...rest } = block
  return Object.keys(rest).length > 0 ? rest : undefined
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}

function isRecord(value: unknown): value is ContentBlock {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
