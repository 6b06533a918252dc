import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'

/** The repository root. */
export const repo = resolve(import.meta.dirname, '../..')

/** One fenced code block of a markdown page. */
export interface Block {
  /** `docs/agents.md:10`: where the block's opening fence is. */
  where: string
  /** The fence's language: `ts`, `json`, `sh`, ... */
  lang: string
  /** The words after the language on the fence: ```` ```ts fragment @kode/session ```` → `['fragment', '@kode/session']`. */
  tags: string[]
  code: string
}

/** The fenced code blocks of a markdown file (path relative to the repository). */
export function blocksOf(file: string): Block[] {
  const lines = readFileSync(join(repo, file), 'utf8').split('\n')
  const blocks: Block[] = []
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\S+)(.*)$/.exec(lines[i]!.trim())
    if (!fence) continue
    const start = i
    const body: string[] = []
    while (++i < lines.length && !lines[i]!.startsWith('```')) body.push(lines[i]!)
    blocks.push({
      where: `${relative(repo, join(repo, file))}:${start + 1}`,
      lang: fence[1]!,
      tags: fence[2]!.trim().split(/\s+/).filter(Boolean),
      code: `${body.join('\n')}\n`,
    })
  }
  return blocks
}

/** README.md and every page of docs/, relative to the repository. */
export const docFiles = [
  'README.md',
  ...readdirSync(join(repo, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
]
