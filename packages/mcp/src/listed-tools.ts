import { ListToolsResultSchema, ToolSchema } from '@modelcontextprotocol/sdk/types.js'
import * as z from 'zod/v4'
import { isRecord } from './is-record.js'
import type { ListedTool } from './mcp-tool.js'
import { MAX_NESTING, nestsDeeperThan } from './nesting.js'

/**
 * A `tools/list` page as the SDK reads it, but with each tool left to `readTool`: the SDK's own
 * schema fails the whole page, and so the whole server, over one tool that departs from it. A
 * `nextCursor` of `null` (how some servers end a list) is the end, as one left out is.
 */
export const LIST_RESULT = ListToolsResultSchema.extend({
  tools: z.array(z.unknown()),
  nextCursor: z
    .string()
    .nullish()
    .transform((cursor) => cursor ?? undefined),
})

/**
 * A listed tool as the protocol describes it, or, for one that departs from that, what of it reads:
 * the fields that do, its `inputSchema` as sent (an open object when it is not an object schema;
 * `toKodeTool` decides), and its `outputSchema` as sent when it is an object (`toKodeTool` repairs
 * it). A tool without a name cannot be called and is `undefined`, as is one nested deeper than
 * `MAX_NESTING`.
 */
export function readTool(raw: unknown): ListedTool | undefined {
  // A schema nested without end would fail every model call it is offered in (see `MAX_NESTING`).
  if (nestsDeeperThan(raw, MAX_NESTING)) return undefined
  const parsed = ToolSchema.safeParse(raw)
  if (parsed.success) return parsed.data as ListedTool
  if (!isRecord(raw) || typeof raw.name !== 'string') return undefined
  const tool: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(ToolSchema.shape)) {
    if (raw[key] === undefined) continue
    const read = field.safeParse(raw[key])
    if (read.success) tool[key] = read.data
  }
  // Valid JSON Schema the protocol's schema is stricter about (a boolean schema as a property),
  // or one `toKodeTool` repairs (`properties: []`, a `required` entry that is not a string).
  tool.inputSchema ??= isRecord(raw.inputSchema) ? raw.inputSchema : {}
  if (tool.outputSchema === undefined && isRecord(raw.outputSchema)) tool.outputSchema = raw.outputSchema
  return tool as unknown as ListedTool
}
