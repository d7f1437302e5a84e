// html-encoding-sniffer ships no types: its one export, as its README documents it.
declare module 'html-encoding-sniffer' {
  export default function htmlEncodingSniffer(
    bytes: Uint8Array,
    options?: { xml?: boolean; transportLayerEncodingLabel?: string; defaultEncoding?: string },
  ): string;
}
