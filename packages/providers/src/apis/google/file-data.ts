/** Gemini `fileData`: a file by URI, with its media type when it can be told. */
export interface GoogleFileData {
  fileUri: string
  mimeType?: string
}

/**
 * Image media types by file extension, for the formats Gemini's image docs list (PNG, JPEG,
 * WEBP, HEIC, HEIF) and GIF. Kode's `image_url` part carries no media type, so the URL's path is
 * all there is to go on.
 */
const IMAGE_TYPES: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  heif: 'image/heif',
}

/**
 * An http(s) image URL as Gemini `fileData`, with the `mimeType` its path's extension names. The
 * Gemini API documents `mimeType` as optional here and Vertex AI as required: an image whose type
 * the path does not name goes without one, as before, and the server decides, rather than Kode
 * refusing a request the API may take.
 */
export function imageFileData(url: string): GoogleFileData {
  const extension = pathOf(url)
    ?.match(/\.([a-z0-9]+)$/i)?.[1]
    ?.toLowerCase()
  const mimeType = extension === undefined ? undefined : IMAGE_TYPES[extension]
  return mimeType === undefined ? { fileUri: url } : { fileUri: url, mimeType }
}

function pathOf(url: string): string | undefined {
  try {
    return new URL(url).pathname
  } catch {
    return undefined
  }
}
