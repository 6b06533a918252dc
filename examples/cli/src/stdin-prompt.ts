import { UsageError } from './args.js'

/** The largest prompt `kode exec -` reads from stdin: a file piped in whole, not a stream without end. */
export const STDIN_PROMPT_LIMIT = 8 * 1024 * 1024

/**
 * The prompt `kode exec -` reads from stdin: all of it, as UTF-8, trimmed. An empty one, or one
 * over `STDIN_PROMPT_LIMIT` bytes (read no further), is a usage error.
 */
export async function readStdinPrompt(
  input: AsyncIterable<Buffer | string>,
  limit = STDIN_PROMPT_LIMIT,
): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of input) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    size += bytes.length
    if (size > limit) {
      throw new UsageError(`kode exec -: the prompt on stdin is over ${limit / 1024 / 1024} MiB`)
    }
    chunks.push(bytes)
  }
  const prompt = Buffer.concat(chunks).toString('utf8').trim()
  if (prompt === '') throw new UsageError('kode exec -: stdin held no prompt')
  return prompt
}
