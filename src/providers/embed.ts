/*
 * The player page of a video platform's watch URL, for an iframe, as SearXNG derives it
 * (searx/utils.py get_embeded_stream_url, and its vimeo and dailymotion engines): YouTube's
 * watch and short links play from youtube-nocookie.com, Vimeo's from player.vimeo.com,
 * Dailymotion's from its /embed/video/ path. Other hosts: "" (PeerTube sends its own embedUrl).
 */

const YOUTUBE_HOSTS: ReadonlySet<string> = new Set(['www.youtube.com', 'youtube.com', 'm.youtube.com']);
const VIMEO_HOSTS: ReadonlySet<string> = new Set(['vimeo.com', 'www.vimeo.com']);
const DAILYMOTION_HOSTS: ReadonlySet<string> = new Set(['www.dailymotion.com', 'dailymotion.com']);
const VIDEO_ID = /^[A-Za-z0-9_-]{1,64}$/;

export function embedUrlOf(watchUrl: string): string {
  if (!URL.canParse(watchUrl)) return '';
  const u = new URL(watchUrl);
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return '';
  const host = u.hostname.toLowerCase();
  const segments = u.pathname.split('/').filter((s) => s !== '');
  let id = '';
  if (YOUTUBE_HOSTS.has(host)) {
    id =
      u.pathname === '/watch' ? (u.searchParams.get('v') ?? '') : segments[0] === 'shorts' ? (segments[1] ?? '') : '';
    return VIDEO_ID.test(id) ? `https://www.youtube-nocookie.com/embed/${id}` : '';
  }
  if (host === 'youtu.be') {
    id = segments[0] ?? '';
    return VIDEO_ID.test(id) ? `https://www.youtube-nocookie.com/embed/${id}` : '';
  }
  if (VIMEO_HOSTS.has(host)) {
    id = segments.length === 1 ? segments[0]! : '';
    return /^\d{1,20}$/.test(id) ? `https://player.vimeo.com/video/${id}` : '';
  }
  if (DAILYMOTION_HOSTS.has(host) && segments.length === 2 && segments[0] === 'video') {
    id = segments[1]!;
    return VIDEO_ID.test(id) ? `https://www.dailymotion.com/embed/video/${id}` : '';
  }
  return '';
}
