/** Yields the `data:` payloads of a Server-Sent Events body, one per event, until `[DONE]` or the end. */
export async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      buffer = buffer.replace(/\r\n/g, '\n');
      let boundary = buffer.indexOf('\n\n');
      while (boundary >= 0 || (done && buffer.trim() !== '')) {
        const block = boundary >= 0 ? buffer.slice(0, boundary) : buffer;
        buffer = boundary >= 0 ? buffer.slice(boundary + 2) : '';
        const data = block
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).replace(/^ /, ''))
          .join('\n');
        if (data === '[DONE]') return;
        if (data !== '') yield data;
        boundary = buffer.indexOf('\n\n');
      }
      if (done) return;
    }
  } finally {
    reader.releaseLock();
  }
}
