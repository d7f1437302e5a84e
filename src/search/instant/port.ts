import { alternation } from './text.js';
import type { InstantHandler } from './types.js';
import { PORT_VOCABULARY } from './vocabulary.js';

/*
 * `port`: what a TCP/UDP port is used for ("port 443", "22 port", "ssh
 * port"). Fields: `port`, `known`, plus `service`, `protocol`,
 * `description` when the port is in the table below (IANA assignments and
 * common de-facto uses). Ports outside 0..65535 are no answer.
 */

interface PortInfo {
  service: string;
  protocol: string;
  description: string;
}

const P = (service: string, protocol: string, description: string): PortInfo => ({ service, protocol, description });

export const PORTS: Record<number, PortInfo> = {
  7: P('Echo', 'TCP/UDP', 'Echo protocol'),
  20: P('FTP-DATA', 'TCP', 'File Transfer Protocol (data transfer)'),
  21: P('FTP', 'TCP', 'File Transfer Protocol (control)'),
  22: P('SSH', 'TCP', 'Secure Shell: remote login, SFTP and SCP'),
  23: P('Telnet', 'TCP', 'Telnet: unencrypted remote login'),
  25: P('SMTP', 'TCP', 'Simple Mail Transfer Protocol (mail relay)'),
  53: P('DNS', 'TCP/UDP', 'Domain Name System'),
  67: P('DHCP', 'UDP', 'DHCP server (BOOTP)'),
  68: P('DHCP', 'UDP', 'DHCP client (BOOTP)'),
  69: P('TFTP', 'UDP', 'Trivial File Transfer Protocol'),
  80: P('HTTP', 'TCP', 'Hypertext Transfer Protocol (the web)'),
  88: P('Kerberos', 'TCP/UDP', 'Kerberos authentication'),
  110: P('POP3', 'TCP', 'Post Office Protocol v3 (mail retrieval)'),
  119: P('NNTP', 'TCP', 'Network News Transfer Protocol (Usenet)'),
  123: P('NTP', 'UDP', 'Network Time Protocol'),
  135: P('MS RPC', 'TCP/UDP', 'Microsoft RPC endpoint mapper'),
  137: P('NetBIOS-NS', 'UDP', 'NetBIOS name service'),
  138: P('NetBIOS-DGM', 'UDP', 'NetBIOS datagram service'),
  139: P('NetBIOS-SSN', 'TCP', 'NetBIOS session service (SMB over NetBIOS)'),
  143: P('IMAP', 'TCP', 'Internet Message Access Protocol (mail retrieval)'),
  161: P('SNMP', 'UDP', 'Simple Network Management Protocol'),
  162: P('SNMP Trap', 'UDP', 'SNMP traps'),
  179: P('BGP', 'TCP', 'Border Gateway Protocol'),
  194: P('IRC', 'TCP', 'Internet Relay Chat'),
  389: P('LDAP', 'TCP/UDP', 'Lightweight Directory Access Protocol'),
  443: P('HTTPS', 'TCP/UDP', 'HTTP over TLS (the secure web; UDP for HTTP/3)'),
  445: P('SMB', 'TCP', 'Server Message Block (Windows file sharing)'),
  465: P('SMTPS', 'TCP', 'SMTP over implicit TLS (mail submission)'),
  500: P('ISAKMP', 'UDP', 'IKE key exchange for IPsec VPNs'),
  514: P('Syslog', 'UDP', 'Syslog'),
  515: P('LPD', 'TCP', 'Line Printer Daemon'),
  520: P('RIP', 'UDP', 'Routing Information Protocol'),
  546: P('DHCPv6', 'UDP', 'DHCPv6 client'),
  547: P('DHCPv6', 'UDP', 'DHCPv6 server'),
  554: P('RTSP', 'TCP/UDP', 'Real Time Streaming Protocol'),
  587: P('Submission', 'TCP', 'Mail submission (SMTP with STARTTLS)'),
  631: P('IPP', 'TCP', 'Internet Printing Protocol (CUPS)'),
  636: P('LDAPS', 'TCP', 'LDAP over TLS'),
  853: P('DNS over TLS', 'TCP', 'DNS over TLS'),
  873: P('rsync', 'TCP', 'rsync file synchronisation'),
  989: P('FTPS-DATA', 'TCP', 'FTP over TLS (data)'),
  990: P('FTPS', 'TCP', 'FTP over TLS (control)'),
  993: P('IMAPS', 'TCP', 'IMAP over TLS'),
  995: P('POP3S', 'TCP', 'POP3 over TLS'),
  1080: P('SOCKS', 'TCP', 'SOCKS proxy'),
  1194: P('OpenVPN', 'TCP/UDP', 'OpenVPN'),
  1433: P('MS SQL', 'TCP', 'Microsoft SQL Server'),
  1521: P('Oracle', 'TCP', 'Oracle database listener'),
  1701: P('L2TP', 'UDP', 'Layer 2 Tunneling Protocol'),
  1723: P('PPTP', 'TCP', 'Point-to-Point Tunneling Protocol'),
  1812: P('RADIUS', 'UDP', 'RADIUS authentication'),
  1813: P('RADIUS', 'UDP', 'RADIUS accounting'),
  1883: P('MQTT', 'TCP', 'MQTT messaging'),
  2049: P('NFS', 'TCP/UDP', 'Network File System'),
  2375: P('Docker', 'TCP', 'Docker daemon API (unencrypted)'),
  2376: P('Docker', 'TCP', 'Docker daemon API over TLS'),
  2379: P('etcd', 'TCP', 'etcd client API'),
  3000: P('Dev server', 'TCP', 'Common development web server port (Node.js, Grafana, Rails)'),
  3128: P('Squid', 'TCP', 'Squid HTTP proxy'),
  3306: P('MySQL', 'TCP', 'MySQL / MariaDB database'),
  3389: P('RDP', 'TCP/UDP', 'Remote Desktop Protocol'),
  3478: P('STUN/TURN', 'TCP/UDP', 'STUN and TURN (NAT traversal)'),
  4369: P('EPMD', 'TCP', 'Erlang Port Mapper Daemon'),
  5000: P('Dev server', 'TCP', 'Common development server port (Flask, UPnP, Docker registry)'),
  5060: P('SIP', 'TCP/UDP', 'Session Initiation Protocol (VoIP)'),
  5061: P('SIPS', 'TCP', 'SIP over TLS'),
  5222: P('XMPP', 'TCP', 'XMPP client connections (Jabber)'),
  5269: P('XMPP', 'TCP', 'XMPP server-to-server'),
  5353: P('mDNS', 'UDP', 'Multicast DNS (Bonjour, Avahi)'),
  5432: P('PostgreSQL', 'TCP', 'PostgreSQL database'),
  5672: P('AMQP', 'TCP', 'AMQP messaging (RabbitMQ)'),
  5900: P('VNC', 'TCP', 'Virtual Network Computing (remote desktop)'),
  6379: P('Redis', 'TCP', 'Redis key-value store'),
  6443: P('Kubernetes API', 'TCP', 'Kubernetes API server'),
  6667: P('IRC', 'TCP', 'Internet Relay Chat'),
  8000: P('HTTP (alt)', 'TCP', 'Alternative HTTP port (development servers)'),
  8008: P('HTTP (alt)', 'TCP', 'Alternative HTTP port'),
  8080: P('HTTP (alt)', 'TCP', 'Alternative HTTP port (proxies, application servers)'),
  8443: P('HTTPS (alt)', 'TCP', 'Alternative HTTPS port'),
  8883: P('MQTT over TLS', 'TCP', 'MQTT over TLS'),
  9000: P('Dev server', 'TCP', 'Common application port (PHP-FPM, SonarQube, MinIO)'),
  9090: P('Prometheus', 'TCP', 'Prometheus web UI and API'),
  9092: P('Kafka', 'TCP', 'Apache Kafka broker'),
  9100: P('JetDirect', 'TCP', 'Raw printing (HP JetDirect); Prometheus node exporter'),
  9200: P('Elasticsearch', 'TCP', 'Elasticsearch REST API'),
  9418: P('Git', 'TCP', 'Git protocol'),
  11211: P('Memcached', 'TCP/UDP', 'Memcached'),
  25565: P('Minecraft', 'TCP', 'Minecraft Java Edition server'),
  27017: P('MongoDB', 'TCP', 'MongoDB database'),
  51820: P('WireGuard', 'UDP', 'WireGuard VPN'),
};

/** Service names people type ("ssh port", "port for postgres") → port. */
const SERVICE_PORTS = new Map<string, number>([
  ...Object.entries(PORTS)
    .filter(([, info]) => !/\(alt\)|Dev server/.test(info.service))
    .reverse()
    .map(([port, info]) => [info.service.toLowerCase(), Number(port)] as [string, number]),
  ['http', 80],
  ['https', 443],
  ['ssh', 22],
  ['ftp', 21],
  ['smtp', 25],
  ['dns', 53],
  ['postgres', 5432],
  ['postgresql', 5432],
  ['mysql', 3306],
  ['mariadb', 3306],
  ['mongodb', 27017],
  ['mongo', 27017],
  ['redis', 6379],
  ['rdp', 3389],
  ['remote desktop', 3389],
  ['sql server', 1433],
  ['mssql', 1433],
  ['smb', 445],
  ['samba', 445],
  ['imap', 143],
  ['imaps', 993],
  ['pop3', 110],
  ['ntp', 123],
  ['ldap', 389],
  ['telnet', 23],
  ['vnc', 5900],
  ['elasticsearch', 9200],
  ['kafka', 9092],
  ['rabbitmq', 5672],
  ['minecraft', 25565],
  ['wireguard', 51820],
  ['openvpn', 1194],
  ['memcached', 11211],
  ['prometheus', 9090],
  ['git', 9418],
  ['mqtt', 1883],
  ['kubernetes', 6443],
  ['docker', 2375],
]);

const V = Object.values(PORT_VOCABULARY);
const NUMBER = '(\\d{1,6})';
const BY_NUMBER = [
  new RegExp(`^${alternation(V.flatMap((v) => v.prefixes))}\\s*:?\\s*${NUMBER}$`, 'u'),
  new RegExp(`^${NUMBER}\\s+${alternation(V.flatMap((v) => v.suffixes))}$`, 'u'),
];
const serviceNames = alternation(SERVICE_PORTS.keys());
const BY_SERVICE = [
  new RegExp(`^(${serviceNames})\\s+(?:default\\s+)?port(?:\\s+number)?$`, 'u'),
  new RegExp(`^(?:${alternation(V.flatMap((v) => v.servicePrefixes))})\\s+(${serviceNames})(?:\\s+use)?$`, 'u'),
];

export function describePort(port: number): Record<string, unknown> {
  const info = PORTS[port];
  return info ? { port, known: true, ...info } : { port, known: false };
}

export const portHandler: InstantHandler = {
  type: 'port',
  async answer(ctx) {
    for (const re of BY_NUMBER) {
      const m = re.exec(ctx.text);
      if (!m) continue;
      const port = Number(m[1]);
      return port <= 65535 ? describePort(port) : null;
    }
    for (const re of BY_SERVICE) {
      const m = re.exec(ctx.text);
      const port = m ? SERVICE_PORTS.get(m[1]!.replace(/\s+/g, ' ')) : undefined;
      if (port !== undefined) return describePort(port);
    }
    return null;
  },
};
