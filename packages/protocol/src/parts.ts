import { type Static, Type } from '@sinclair/typebox'

/**
 * Fields of a provider's block or response that Kode has no field for, kept as sent: on a tool
 * call or a message, what the same wire format needs back (Anthropic programmatic tool calling: a
 * `tool_use` block's `caller`, the response's `container`); on a {@link Citation}, the provider's
 * citation. Only the adapter of `format` reads them; other formats leave them out.
 */
export const ProviderFields = Type.Object(
  {
    format: Type.String(),
    fields: Type.Record(Type.String(), Type.Unknown()),
  },
  { $id: 'ProviderFields' },
)
export type ProviderFields = Static<typeof ProviderFields>

/**
 * A source the model cited for a text part: a web page a search found (Anthropic web search,
 * OpenAI's `url_citation`, Gemini's grounding), a document or a file. Every field is optional,
 * as providers name different things; `providerFields` keeps the provider's citation whole, with
 * what Kode has no field for (a document's index and character or page range, OpenAI's character
 * span in the message's text, Anthropic's `encrypted_index`). Citations are kept for the host and
 * the transcript; no request sends them back.
 */
export const Citation = Type.Object(
  {
    /** The cited web page or file URL. */
    url: Type.Optional(Type.String()),
    /** The page's or document's title, or a file's name. */
    title: Type.Optional(Type.String()),
    /** The passage of the source the text relies on, where the provider quotes it. */
    citedText: Type.Optional(Type.String()),
    /** The provider's citation as sent (`format` names the wire it came from). */
    providerFields: Type.Optional(ProviderFields),
  },
  { $id: 'Citation' },
)
export type Citation = Static<typeof Citation>

/** Plain text. On assistant messages from OpenAI Responses, `itemId` and `phase` keep the message item. */
export const TextPart = Type.Object(
  {
    type: Type.Literal('text'),
    text: Type.String(),
    /** Provider item id of the message that carried this text (OpenAI Responses `msg_...`). */
    itemId: Type.Optional(Type.String()),
    /** OpenAI Responses message `phase` (e.g. `commentary`, `final_answer`), sent back as received. */
    phase: Type.Optional(Type.String()),
    /** The sources the model cited for this text, in the order the provider gave them. */
    citations: Type.Optional(Type.Array(Citation)),
  },
  { $id: 'TextPart' },
)
export type TextPart = Static<typeof TextPart>

/** An image by URL: `http(s)://...` or a `data:<mime>;base64,...` URL. */
export const ImageUrlPart = Type.Object(
  {
    type: Type.Literal('image_url'),
    url: Type.String({ pattern: '^(https?:|data:)' }),
  },
  { $id: 'ImageUrlPart' },
)
export type ImageUrlPart = Static<typeof ImageUrlPart>

/** An image stored on disk; adapters read it through the host-supplied file reader. */
export const ImageFilePart = Type.Object(
  {
    type: Type.Literal('image_file'),
    path: Type.String({ minLength: 1 }),
    mimeType: Type.String({ pattern: '^image/' }),
  },
  { $id: 'ImageFilePart' },
)
export type ImageFilePart = Static<typeof ImageFilePart>

/** Reasoning text as the model streamed it (or its summary, where that is all the provider gives). */
export const ThinkingTextPart = Type.Object(
  {
    type: Type.Literal('thinking_text'),
    text: Type.String(),
  },
  { $id: 'ThinkingTextPart' },
)
export type ThinkingTextPart = Static<typeof ThinkingTextPart>

/** Which wire format a reasoning signature belongs to; only that format can read it back. */
export const SignatureFormat = Type.Union([
  Type.Literal('anthropic'),
  Type.Literal('google'),
  Type.Literal('openai-responses'),
  Type.Literal('openrouter'),
])
export type SignatureFormat = Static<typeof SignatureFormat>

/**
 * Opaque reasoning state that must round-trip to the provider that produced it: an Anthropic
 * thinking signature (or redacted thinking data), a Gemini `thoughtSignature`, OpenAI Responses
 * encrypted reasoning, OpenRouter `reasoning_details`. Sent only to the same format and model.
 */
export const ThinkingSignaturePart = Type.Object(
  {
    type: Type.Literal('thinking_signature'),
    signature: Type.String(),
    format: SignatureFormat,
    /** The model that produced the signature. */
    model: Type.String(),
    /** Provider item id (OpenAI Responses reasoning item `rs_...`). */
    itemId: Type.Optional(Type.String()),
    /** Anthropic `redacted_thinking`: `signature` holds the block's opaque `data`. */
    redacted: Type.Optional(Type.Boolean()),
  },
  { $id: 'ThinkingSignaturePart' },
)
export type ThinkingSignaturePart = Static<typeof ThinkingSignaturePart>

/** A tool call requested by the model. `argumentsJson` is the raw JSON text the model produced. */
export const ToolCallPart = Type.Object(
  {
    type: Type.Literal('tool_call'),
    id: Type.String({ minLength: 1 }),
    name: Type.String(),
    argumentsJson: Type.String(),
    /** Provider item id where it differs from the call id (OpenAI Responses `fc_...`). */
    itemId: Type.Optional(Type.String()),
    /** True when the arguments never closed (cut stream, `length`): the call must not run. */
    incomplete: Type.Optional(Type.Boolean()),
    /** The wire block's other fields (Anthropic `caller`), sent back to the same format. */
    providerFields: Type.Optional(ProviderFields),
  },
  { $id: 'ToolCallPart' },
)
export type ToolCallPart = Static<typeof ToolCallPart>

/** A provider's block: its `type` and whatever else it holds, every field kept. */
export interface ServerToolBlock {
  type: string
  [field: string]: unknown
}

/**
 * A tool the provider ran on its own side, kept as the provider's block: Anthropic's
 * `server_tool_use` and its results (`web_search_tool_result`, `web_fetch_tool_result`,
 * `code_execution_tool_result`, `bash_code_execution_tool_result`,
 * `text_editor_code_execution_tool_result`, `tool_search_tool_result`), `mcp_tool_use` /
 * `mcp_tool_result` and `container_upload`; Gemini's `executableCode` and `codeExecutionResult`
 * (format `google`). Kode never executes one and never treats it as a
 * `tool_call`; it goes back to the same wire format unchanged, and other formats leave it out.
 */
export const ServerToolPart = Type.Object(
  {
    type: Type.Literal('server_tool'),
    /** The wire format the block belongs to and is sent back to (`anthropic`). */
    format: Type.String({ minLength: 1 }),
    /**
     * The block as the provider sent it (streamed input assembled): its own `type` (e.g.
     * `server_tool_use`), ids, `name`, `input` or `content`. Every field is kept.
     */
    block: Type.Unsafe<ServerToolBlock>(Type.Object({ type: Type.String({ minLength: 1 }) })),
  },
  { $id: 'ServerToolPart' },
)
export type ServerToolPart = Static<typeof ServerToolPart>

export const ImagePart = Type.Union([ImageUrlPart, ImageFilePart])
export type ImagePart = Static<typeof ImagePart>

/** Every part, discriminated on `type`. */
export const Part = Type.Union([
  TextPart,
  ImageUrlPart,
  ImageFilePart,
  ThinkingTextPart,
  ThinkingSignaturePart,
  ToolCallPart,
  ServerToolPart,
])
export type Part = Static<typeof Part>

/** What a user or developer message may hold. */
export const UserContentPart = Type.Union([TextPart, ImageUrlPart, ImageFilePart])
export type UserContentPart = Static<typeof UserContentPart>

/** What an assistant message may hold. */
export const AssistantPart = Type.Union([
  TextPart,
  ImageUrlPart,
  ImageFilePart,
  ThinkingTextPart,
  ThinkingSignaturePart,
  ToolCallPart,
  ServerToolPart,
])
export type AssistantPart = Static<typeof AssistantPart>
