package vpec

// QuantizeProbability is quantizeProbability, for the external test that
// compares it with pkg/zk/conditions.QuantizeScore (an internal test
// cannot import pkg/zk, which imports this package).
var QuantizeProbability = quantizeProbability

// ValidTime is validTime, for FuzzParseTime: it must agree with ParseTime.
var ValidTime = validTime
