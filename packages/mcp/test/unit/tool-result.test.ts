import { describe, expect, test } from 'vitest'
import { toToolOutput } from '../../src/tool-result.js'

describe('a tools/call result as a Kode tool output', () => {
  test('structured content nested past the limit is neither kept nor shown, only noted', () => {
    let nested: unknown = 1
    for (let i = 0; i < 150; i++) nested = { a: nested }
    let fits: unknown = 1
    for (let i = 0; i < 99; i++) fits = { a: fits }
    expect(toToolOutput({ content: [], structuredContent: nested })).toEqual({
      outputText: '[structured content omitted: it nests over 100 levels deep]',
    })
    expect(toToolOutput({ content: [], structuredContent: fits })).toEqual({
      outputText: JSON.stringify(fits),
      uiExtra: { type: 'json', value: fits },
    })
  })

  test('text blocks are joined one per line; images become data-URL parts', () => {
    expect(
      toToolOutput({
        content: [
          { type: 'text', text: 'first' },
          { type: 'image', data: 'AAAA', mimeType: 'image/png' },
          { type: 'text', text: 'second' },
        ],
      }),
    ).toEqual({
      outputText: 'first\nsecond',
      parts: [{ type: 'image_url', url: 'data:image/png;base64,AAAA' }],
    })
  })

  test('an image goes under the type name models take; one of a type they refuse is a note', () => {
    expect(
      toToolOutput({
        content: [
          { type: 'image', data: 'AAAA', mimeType: 'image/JPG' },
          { type: 'image', data: 'BBBB', mimeType: 'image/webp; q=1' },
          { type: 'image', data: 'CCCC', mimeType: 'image/tiff' },
        ],
      }),
    ).toEqual({
      outputText: '[image (image/tiff) omitted: models take PNG, JPEG and WebP images]',
      parts: [
        { type: 'image_url', url: 'data:image/jpeg;base64,AAAA' },
        { type: 'image_url', url: 'data:image/webp;base64,BBBB' },
      ],
    })
  })

  test('isError makes an error result', () => {
    expect(toToolOutput({ content: [{ type: 'text', text: 'no such file' }], isError: true })).toEqual({
      outputText: 'no such file',
      status: 'error',
    })
  })

  test('structured content is kept in uiExtra, and is the text when the server sent none', () => {
    expect(toToolOutput({ content: [], structuredContent: { n: 1 } })).toEqual({
      outputText: '{"n":1}',
      uiExtra: { type: 'json', value: { n: 1 } },
    })
    expect(
      toToolOutput({ content: [{ type: 'text', text: 'one' }], structuredContent: { n: 1 } }).outputText,
    ).toBe('one')
  })

  test('structured content over 256 KiB of JSON is not kept for UIs; an image over 5 MiB is a note', () => {
    const long = { text: 'x'.repeat(256 * 1024 - 11) } // {"text":"…"}: 256 KiB of JSON
    expect(toToolOutput({ content: [], structuredContent: long }).uiExtra).toEqual({
      type: 'json',
      value: long,
    })
    const longer = { text: `${long.text}x` }
    expect(toToolOutput({ content: [], structuredContent: longer })).toEqual({
      outputText: JSON.stringify(longer),
    })
    const limit = 5 * 1024 * 1024
    expect(
      toToolOutput({ content: [{ type: 'image', data: 'A'.repeat(limit), mimeType: 'image/png' }] }).parts,
    ).toHaveLength(1)
    expect(
      toToolOutput({ content: [{ type: 'image', data: 'A'.repeat(limit + 4), mimeType: 'image/png' }] }),
    ).toEqual({ outputText: '[image (image/png, 5.0 MB as base64) omitted: models take images up to 5 MB]' })
  })

  test('what the model cannot take is a one-line note; unknown blocks are tolerated', () => {
    const output = toToolOutput({
      content: [
        { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
        { type: 'resource_link', uri: 'file:///a.txt', name: 'a.txt' },
        { type: 'resource', resource: { uri: 'file:///b.txt', text: 'bee' } },
        { type: 'resource', resource: { uri: 'file:///c.bin', blob: 'AAAA', mimeType: 'application/zip' } },
        { type: 'hologram', frames: 3 },
      ],
    })
    expect(output.outputText.split('\n')).toEqual([
      '[audio (audio/wav) omitted]',
      '[resource a.txt: file:///a.txt]',
      '[resource file:///b.txt]',
      'bee',
      '[binary resource file:///c.bin (application/zip) omitted]',
      '[hologram content omitted]',
    ])
  })

  test('an embedded binary resource that is text is read; one that is an image is shown', () => {
    const output = toToolOutput({
      content: [
        {
          type: 'resource',
          resource: {
            uri: 'file:///notes.md',
            blob: Buffer.from('# Notes ✓').toString('base64'),
            mimeType: 'text/markdown; charset=utf-8',
          },
        },
        {
          type: 'resource',
          resource: {
            uri: 'file:///a.json',
            blob: Buffer.from('{"a":1}').toString('base64'),
            mimeType: 'application/ld+json',
          },
        },
        { type: 'resource', resource: { uri: 'file:///shot.png', blob: 'iVBORw0K', mimeType: 'image/png' } },
        {
          type: 'resource',
          resource: { uri: 'file:///logo.svg', blob: 'PHN2Zz4=', mimeType: 'image/svg+xml' },
        },
      ],
    })
    expect(output).toEqual({
      outputText: [
        '[resource file:///notes.md]',
        '# Notes ✓',
        '[resource file:///a.json]',
        '{"a":1}',
        '[binary resource file:///logo.svg (image/svg+xml) omitted]',
      ].join('\n'),
      parts: [{ type: 'image_url', url: 'data:image/png;base64,iVBORw0K' }],
    })
  })

  test('the 2024-10-07 toolResult form is read as text', () => {
    expect(toToolOutput({ toolResult: { ok: true } })).toEqual({ outputText: '{"ok":true}' })
  })
})
