//! Render clocks: each mode's answer to "which server time do we show now".

use std::collections::VecDeque;

/// A render clock that follows a moving target by changing its speed
/// (time-scale slewing), so that a change of delay never makes an object
/// jump; only an error past `hard_resync` jumps.
#[derive(Clone, Debug, Default)]
pub struct SlewedClock {
    render: Option<f64>,
    last_now: f64,
    scale: f64,
    resyncs: u64,
}

impl SlewedClock {
    /// Advances to `now` towards `target` and returns the render time.
    pub fn advance(
        &mut self,
        now: f64,
        target: f64,
        max_scale: f64,
        slew_time: f64,
        hard_resync: f64,
    ) -> f64 {
        let Some(render) = self.render else {
            self.render = Some(target);
            self.last_now = now;
            self.scale = 1.0;
            return target;
        };
        let dt = (now - self.last_now).max(0.0);
        let predicted = render + dt;
        let error = target - predicted;
        let next = if error.abs() > hard_resync {
            self.resyncs += 1;
            target
        } else {
            let step = error * (1.0 - (-dt / slew_time).exp());
            let limit = max_scale * dt;
            predicted + step.clamp(-limit, limit)
        };
        if dt > 0.0 {
            self.scale = (next - render) / dt;
        }
        self.render = Some(next);
        self.last_now = now;
        next
    }

    pub fn render(&self) -> Option<f64> {
        self.render
    }
    pub fn scale(&self) -> f64 {
        self.scale
    }
    pub fn resyncs(&self) -> u64 {
        self.resyncs
    }
}

/// S1 as written. The client anchors on the first packet (`ct0`, `st0`),
/// keeps the last `m` frame times in a deque and computes
/// `dct = ct - ct0 - t_delay`; when `dct` falls before the oldest frame the
/// delay shrinks so that it lands there (the converging reading of the
/// source's garbled formula). The delay never grows.
#[derive(Clone, Debug)]
pub struct LiteralClock {
    frames: usize,
    delay: f64,
    anchor: Option<(f64, f64)>,
    deque: VecDeque<f64>,
}

impl LiteralClock {
    pub fn new(frames: usize, initial_delay: f64) -> Self {
        LiteralClock {
            frames,
            delay: initial_delay,
            anchor: None,
            deque: VecDeque::with_capacity(frames + 1),
        }
    }

    pub fn on_frame(&mut self, receive_time: f64, server_time: f64) {
        let (_, st0) = *self.anchor.get_or_insert((receive_time, server_time));
        self.deque.push_back(server_time - st0);
        if self.deque.len() > self.frames {
            self.deque.pop_front();
        }
    }

    pub fn render_time(&mut self, now: f64) -> Option<f64> {
        let (ct0, st0) = self.anchor?;
        let mut dct = now - ct0 - self.delay;
        if let Some(&oldest) = self.deque.front() {
            if dct < oldest {
                self.delay = now - ct0 - oldest;
                dct = oldest;
            }
        }
        Some(st0 + dct)
    }

    pub fn delay(&self) -> f64 {
        self.delay
    }
}

/// The baseline of Unity libraries today (Mirror-style snapshot
/// interpolation): a local timeline started `buffer` behind the first
/// snapshot, buffer = multiplier x send interval + jitter (standard
/// deviation of arrival intervals), a drift average of
/// `remote - local`, and a time-scale of 1 +/- `step` when the drift leaves
/// buffer +/- one send interval.
#[derive(Clone, Debug)]
pub struct BufferedClock {
    multiplier: f64,
    step: f64,
    local: Option<f64>,
    last_now: f64,
    newest_remote: Option<f64>,
    last_receive: Option<f64>,
    send_interval: Ema,
    delivery: Ema,
    drift: Ema,
    scale: f64,
}

impl BufferedClock {
    pub fn new(multiplier: f64, step: f64) -> Self {
        BufferedClock {
            multiplier,
            step,
            local: None,
            last_now: 0.0,
            newest_remote: None,
            last_receive: None,
            send_interval: Ema::new(20),
            delivery: Ema::new(20),
            drift: Ema::new(20),
            scale: 1.0,
        }
    }

    pub fn buffer_time(&self) -> f64 {
        let interval = self.send_interval.mean().unwrap_or(0.05);
        self.multiplier * interval + self.delivery.std_dev()
    }

    pub fn on_frame(&mut self, receive_time: f64, server_time: f64) {
        if let Some(newest) = self.newest_remote {
            if server_time <= newest {
                return; // out of order: the buffer sorts it, the clock ignores it
            }
            self.send_interval.add(server_time - newest);
        }
        if let Some(last) = self.last_receive {
            self.delivery.add(receive_time - last);
        }
        self.last_receive = Some(receive_time);
        self.newest_remote = Some(server_time);
        let buffer = self.buffer_time();
        let local = *self.local.get_or_insert(server_time - buffer);
        // Local time at arrival, as the timeline would have it then.
        let local_then = local + (receive_time - self.last_now).max(0.0) * self.scale;
        self.drift.add(server_time - local_then);
    }

    pub fn render_time(&mut self, now: f64) -> Option<f64> {
        let local = self.local?;
        let dt = (now - self.last_now).max(0.0);
        let mut next = local + dt * self.scale;
        let buffer = self.buffer_time();
        let interval = self.send_interval.mean().unwrap_or(0.05);
        if let Some(newest) = self.newest_remote {
            // Far off (a long stall or a jump of the remote clock): restart.
            if (newest - buffer - next).abs() > 1.0 {
                next = newest - buffer;
                self.drift.reset(buffer);
            }
        }
        let drift = self.drift.mean().unwrap_or(buffer) - buffer;
        self.scale = if drift > interval {
            1.0 + self.step
        } else if drift < -interval {
            1.0 - self.step
        } else {
            1.0
        };
        self.local = Some(next);
        self.last_now = now;
        Some(next)
    }

    pub fn scale(&self) -> f64 {
        self.scale
    }
}

/// Exponential moving average with variance, over about `n` samples.
#[derive(Clone, Debug)]
pub struct Ema {
    alpha: f64,
    mean: Option<f64>,
    variance: f64,
}

impl Ema {
    pub fn new(n: usize) -> Self {
        Ema {
            alpha: 2.0 / (n as f64 + 1.0),
            mean: None,
            variance: 0.0,
        }
    }
    pub fn add(&mut self, x: f64) {
        match self.mean {
            None => self.mean = Some(x),
            Some(m) => {
                let delta = x - m;
                let m2 = m + self.alpha * delta;
                self.variance = (1.0 - self.alpha) * (self.variance + self.alpha * delta * delta);
                self.mean = Some(m2);
            }
        }
    }
    pub fn reset(&mut self, x: f64) {
        self.mean = Some(x);
        self.variance = 0.0;
    }
    pub fn mean(&self) -> Option<f64> {
        self.mean
    }
    pub fn std_dev(&self) -> f64 {
        self.variance.sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slewed_clock_never_exceeds_its_time_scale() {
        let mut c = SlewedClock::default();
        c.advance(0.0, 0.0, 0.1, 0.5, 1.0);
        let mut last = 0.0;
        for i in 1..600 {
            let now = i as f64 / 60.0;
            // Target jumps 0.3 s back at frame 100.
            let target = if i < 100 { now } else { now - 0.3 };
            let r = c.advance(now, target, 0.1, 0.5, 1.0);
            let rate = (r - last) * 60.0;
            assert!((0.9 - 1e-9..=1.1 + 1e-9).contains(&rate), "rate {rate}");
            last = r;
        }
        assert!((last - (599.0 / 60.0 - 0.3)).abs() < 1e-3);
        assert_eq!(c.resyncs(), 0);
        c.advance(11.0, 20.0, 0.1, 0.5, 1.0);
        assert_eq!(c.resyncs(), 1);
    }

    #[test]
    fn literal_shrinks_only() {
        let mut c = LiteralClock::new(3, 0.1);
        // First packet at ct0 = 1.0, st0 = 10.0; then 20 Hz.
        for i in 0..3 {
            c.on_frame(1.0 + i as f64 * 0.05, 10.0 + i as f64 * 0.05);
        }
        let r = c.render_time(1.1).unwrap();
        assert!((r - 10.0).abs() < 1e-12); // dct = 0 lands on the oldest frame
        for i in 3..10 {
            c.on_frame(1.0 + i as f64 * 0.05, 10.0 + i as f64 * 0.05);
        }
        // Oldest of the last 3 frames is dst = 0.35; dct = 0.3 falls before it: shrink.
        let r = c.render_time(1.4).unwrap();
        assert!((r - 10.35).abs() < 1e-9, "{r}");
        // Later frames never grow the delay back.
        let d = c.delay();
        c.on_frame(3.0, 10.5);
        c.render_time(3.0);
        assert!(c.delay() <= d);
        assert!(c.delay() < 0.1);
    }

    #[test]
    fn buffered_clock_settles_near_its_buffer() {
        let mut c = BufferedClock::new(2.0, 0.02);
        let mut now = 0.0;
        let mut next_frame = 0.0;
        let mut r = 0.0;
        while now < 20.0 {
            while next_frame + 0.04 <= now {
                c.on_frame(next_frame + 0.04, next_frame);
                next_frame += 0.05;
            }
            r = c.render_time(now).unwrap_or(0.0);
            now += 1.0 / 60.0;
        }
        let behind = (now - 1.0 / 60.0) - 0.04 - r;
        assert!((0.05..0.16).contains(&behind), "behind newest by {behind}");
    }
}
