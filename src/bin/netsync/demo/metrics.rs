//! What the demo measures per client, as it runs.

/// Width of one bucket of the time series (s).
pub const BUCKET: f64 = 0.5;

/// One bucket of a client's time series.
#[derive(Clone, Copy, Debug, Default)]
pub struct Bucket {
    pub squared: f64,
    pub samples: u64,
    pub render_delay: f64,
    pub delay_samples: u64,
}

impl Bucket {
    pub fn rms(&self) -> Option<f64> {
        (self.samples > 0).then(|| (self.squared / self.samples as f64).sqrt())
    }

    pub fn delay(&self) -> Option<f64> {
        (self.delay_samples > 0).then(|| self.render_delay / self.delay_samples as f64)
    }
}

/// Everything measured for one client.
#[derive(Clone, Debug, Default)]
pub struct Metrics {
    /// Distance of every shown remote object from its holder's true
    /// position at the shown server time, after the warm-up (m).
    pub divergence: Vec<f32>,
    pub shown: u64,
    pub extrapolated: u64,
    pub transfers_in: u64,
    pub lost: u64,
    pub refused: u64,
    pub claims: u64,
    pub at_rest_reports: u64,
    pub series: Vec<Bucket>,
    /// Per remote object after the warm-up: (sum of squares, samples, worst).
    pub per_entity: std::collections::HashMap<u64, (f64, u64, f32)>,
}

impl Metrics {
    fn bucket(&mut self, t: f64) -> &mut Bucket {
        let i = (t / BUCKET).max(0.0) as usize;
        if self.series.len() <= i {
            self.series.resize(i + 1, Bucket::default());
        }
        &mut self.series[i]
    }

    pub fn divergence_at(&mut self, t: f64, entity: u64, distance: f32, measured: bool) {
        let b = self.bucket(t);
        b.squared += (distance as f64).powi(2);
        b.samples += 1;
        if measured {
            self.divergence.push(distance);
            let e = self.per_entity.entry(entity).or_default();
            e.0 += (distance as f64).powi(2);
            e.1 += 1;
            e.2 = e.2.max(distance);
        }
    }

    /// The `n` objects shown furthest from the truth: (entity, RMS, worst).
    pub fn worst_objects(&self, n: usize) -> Vec<(u64, f64, f32)> {
        let mut all: Vec<(u64, f64, f32)> = self
            .per_entity
            .iter()
            .map(|(&e, &(sq, k, max))| (e, (sq / k.max(1) as f64).sqrt(), max))
            .collect();
        all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        all.truncate(n);
        all
    }

    pub fn render_delay_at(&mut self, t: f64, delay: f64) {
        let b = self.bucket(t);
        b.render_delay += delay;
        b.delay_samples += 1;
    }

    pub fn rms(&self) -> f64 {
        if self.divergence.is_empty() {
            return 0.0;
        }
        let sum: f64 = self.divergence.iter().map(|&d| (d as f64).powi(2)).sum();
        (sum / self.divergence.len() as f64).sqrt()
    }

    pub fn quantile(&self, q: f64) -> f64 {
        if self.divergence.is_empty() {
            return 0.0;
        }
        let mut sorted = self.divergence.clone();
        sorted.sort_by(f32::total_cmp);
        sorted[((sorted.len() - 1) as f64 * q).round() as usize] as f64
    }

    pub fn extrapolated_share(&self) -> f64 {
        if self.shown == 0 {
            return 0.0;
        }
        self.extrapolated as f64 / self.shown as f64
    }
}
