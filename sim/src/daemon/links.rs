//! The daemons' transport: a listener and a reader per connection, and one link task per peer
//! that connects (retrying), applies the link faults and keeps messages in order.

use super::*;

impl Daemon {
    pub(super) async fn listen(self) {
        let port = self.layout().port_of(self.me());
        let listener = match TcpListener::bind(("0.0.0.0", port)).await {
            Ok(l) => l,
            Err(e) => {
                let what = format!("node {} cannot listen: {e}", self.me());
                self.0.setup.observer.violation(what);
                return;
            }
        };
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let d = self.clone();
            self.spawn(async move { d.read_from(stream).await });
        }
    }

    /// Handle what one connection brings. The end of a connection from a known peer means
    /// its daemon is gone: daemons never close a working link (a renewed one is kept open, not
    /// closed), so only a crash sends the end; a partition sends nothing at all.
    pub(super) async fn read_from(&self, mut stream: TcpStream) {
        let mut peer = None;
        loop {
            let mut len = [0u8; 4];
            let mut body = Vec::new();
            let read = match stream.read_exact(&mut len).await {
                Ok(_) => {
                    let n = u32::from_le_bytes(len);
                    if n > MAX_MESSAGE {
                        // Only daemons talk here: a message this large is the simulator's own
                        // bug, which the run must report rather than hide as a lost link.
                        let what = format!("node {}: a {n}-byte daemon message", self.me());
                        self.0.setup.observer.violation(what);
                        return;
                    }
                    body.resize(n as usize, 0);
                    stream.read_exact(&mut body).await.map(|_| ())
                }
                Err(e) => Err(e),
            };
            if read.is_err() {
                if let Some((p, incarnation)) = peer {
                    self.incarnation_down(p, incarnation);
                }
                return;
            }
            match Msg::decode(&body) {
                Some(m) => {
                    peer = Some((m.from, m.incarnation));
                    self.received(m);
                }
                None => {
                    let what = format!("node {}: a daemon message that does not decode", self.me());
                    self.0.setup.observer.violation(what);
                    return;
                }
            }
        }
    }

    /// Queue `body` for node `to`, through that node's link task (started on first use).
    pub(super) fn send(&self, to: u32, body: Body) {
        let msg = Msg {
            from: self.me(),
            incarnation: self.0.setup.incarnation,
            body,
        };
        self.link(to, Out::Msg(msg));
    }

    pub(super) fn link(&self, to: u32, out: Out) {
        let mut links = lock(&self.0.links);
        let tx = links.entry(to).or_insert_with(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            let d = self.clone();
            self.spawn(async move { d.link_task(to, rx).await });
            tx
        });
        let _ = tx.send(out);
    }

    /// Carry messages to `to` in order over one connection, opened when needed; apply the
    /// link's faults. A message that finds no connection (turmoil refuses a connection across
    /// a partition just as to a port nobody listens on) is lost, as a partition loses it.
    pub(super) async fn link_task(self, to: u32, mut rx: mpsc::UnboundedReceiver<Out>) {
        let mut stream: Option<TcpStream> = None;
        // Renewed links stay open: closing one would tell the peer this daemon is gone.
        let mut renewed = Vec::new();
        while let Some(out) = rx.recv().await {
            let msg = match out {
                Out::Reset => {
                    renewed.extend(stream.take());
                    continue;
                }
                Out::Msg(m) => m,
            };
            let rule = lock(&self.0.setup.faults).rule(self.me(), to);
            if rule.drop {
                self.note(format!("dropped a message to {to}").as_bytes());
                continue;
            }
            if !rule.delay.is_zero() {
                tokio::time::sleep(rule.delay).await;
            }
            let heartbeat = msg.body == Body::Heartbeat;
            let body = msg.encode();
            if body.len() > MAX_MESSAGE as usize {
                let what = format!("node {}: a {}-byte message to {to}", self.me(), body.len());
                self.0.setup.observer.violation(what);
                continue;
            }
            let mut frame = Vec::with_capacity(4 + body.len());
            frame.extend_from_slice(&u32::try_from(body.len()).unwrap_or(u32::MAX).to_le_bytes());
            frame.extend_from_slice(&body);
            // A write error means the stream broke (the peer's socket is gone): one new
            // connection is tried before the message counts as lost.
            for _attempt in 0..2 {
                if stream.is_none() {
                    match self.connect(to).await {
                        Some(s) => stream = Some(s),
                        None => {
                            self.note(format!("cannot reach node {to}").as_bytes());
                            break;
                        }
                    }
                }
                let Some(s) = stream.as_mut() else {
                    break;
                };
                if s.write_all(&frame).await.is_ok() {
                    self.0.setup.observer.count_message(frame.len(), heartbeat);
                    break;
                }
                stream = None;
            }
        }
    }

    /// Connect to `to`'s daemon, trying again every 10 ms for up to `connect_timeout`: the
    /// peer may not listen yet (racks start their nodes one after another), or be cut off.
    pub(super) async fn connect(&self, to: u32) -> Option<TcpStream> {
        let rack = Layout::rack_name(self.layout().rack_of(to));
        let port = self.layout().port_of(to);
        let give_up = now() + self.0.setup.liveness.connect_timeout;
        loop {
            let left = give_up.saturating_sub(now());
            if let Ok(Ok(s)) =
                tokio::time::timeout(left, TcpStream::connect((rack.as_str(), port))).await
            {
                return Some(s);
            }
            if now() >= give_up {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}
