/*
 * Unit tables of the unit-conversion answer: categories in matching order,
 * each unit with a stable key, a symbol, a label, and its linear relation to
 * the category's base unit (base = value × factor + offset; only
 * temperatures have an offset). The symbols below are language-neutral;
 * unit NAMES per language are in vocabulary.ts (UNIT_VOCABULARY), mapped to
 * the `id`s used here.
 */

export interface UnitDef {
  /** Internal id (what vocabulary names map to). */
  id: string;
  key: string;
  symbol: string;
  label: string;
  factor: number;
  offset?: number;
  /** Symbols and abbreviations typed for this unit (matched case-insensitively unless `caseSensitive`). */
  aliases: string[];
}

export interface CategoryDef {
  key: string;
  label: string;
  base: string;
  units: UnitDef[];
}

const u = (
  id: string,
  key: string,
  symbol: string,
  label: string,
  factor: number,
  aliases: string[] = [],
  offset = 0,
): UnitDef => ({
  id,
  key,
  symbol,
  label,
  factor,
  aliases: [id, symbol, ...aliases],
  ...(offset ? { offset } : {}),
});

const YEAR = 365 * 86400;

export const CATEGORIES: CategoryDef[] = [
  {
    key: 'length',
    label: 'Length',
    base: 'meter',
    units: [
      u('nm', 'nanometer', 'nm', 'Nanometer', 1e-9),
      u('um', 'micrometer', 'µm', 'Micrometer', 1e-6, ['μm']),
      u('mm', 'millimeter', 'mm', 'Millimeter', 1e-3),
      u('cm', 'centimeter', 'cm', 'Centimeter', 1e-2, ['cms']),
      u('dm', 'decimeter', 'dm', 'Decimeter', 0.1),
      u('m', 'meter', 'm', 'Meter', 1, ['mtr', 'mtrs']),
      u('km', 'kilometer', 'km', 'Kilometer', 1000, ['kms', 'klick', 'klicks']),
      u('in', 'inch', 'in', 'Inch', 0.0254, ['"', '″', 'ins']),
      u('ft', 'foot', 'ft', 'Foot', 0.3048, ["'", '′']),
      u('yd', 'yard', 'yd', 'Yard', 0.9144, ['yds']),
      u('mi', 'mile', 'mi', 'Mile', 1609.344),
      u('nmi', 'nautical_mile', 'nmi', 'Nautical mile', 1852),
      u('au', 'astronomical_unit', 'au', 'Astronomical unit', 149597870700),
      u('ly', 'light_year', 'ly', 'Light-year', 9.4607304725808e15),
    ],
  },
  {
    key: 'mass',
    label: 'Mass',
    base: 'kilogram',
    units: [
      u('ug', 'microgram', 'µg', 'Microgram', 1e-9, ['μg', 'mcg']),
      u('mg', 'milligram', 'mg', 'Milligram', 1e-6),
      u('ct', 'carat', 'ct', 'Carat', 2e-4),
      u('g', 'gram', 'g', 'Gram', 1e-3, ['gr', 'grs', 'gm']),
      u('kg', 'kilogram', 'kg', 'Kilogram', 1, ['kgs']),
      u('t', 'tonne', 't', 'Tonne', 1000),
      u('oz', 'ounce', 'oz', 'Ounce', 0.028349523125, ['ozs']),
      u('lb', 'pound', 'lb', 'Pound', 0.45359237, ['lbs']),
      u('st', 'stone', 'st', 'Stone', 6.35029318),
      u('ton', 'short_ton', 'ton', 'US ton', 907.18474),
      u('lton', 'long_ton', 'long ton', 'Imperial ton', 1016.0469088),
    ],
  },
  {
    key: 'temperature',
    label: 'Temperature',
    base: 'kelvin',
    units: [
      u('c', 'celsius', '°C', 'Celsius', 1, ['°c', 'degc', 'deg c', '℃'], 273.15),
      u('f', 'fahrenheit', '°F', 'Fahrenheit', 5 / 9, ['°f', 'degf', 'deg f', '℉'], 273.15 - (32 * 5) / 9),
      u('k', 'kelvin', 'K', 'Kelvin', 1, ['°k']),
    ],
  },
  {
    key: 'volume',
    label: 'Volume',
    base: 'liter',
    units: [
      u('ml', 'milliliter', 'mL', 'Milliliter', 1e-3, ['mls']),
      u('cl', 'centiliter', 'cL', 'Centiliter', 1e-2),
      u('dl', 'deciliter', 'dL', 'Deciliter', 0.1),
      u('l', 'liter', 'L', 'Liter', 1, ['ltr', 'ltrs', 'lt']),
      u('cm3', 'cubic_centimeter', 'cm³', 'Cubic centimeter', 1e-3, ['cc', 'ccm']),
      u('m3', 'cubic_meter', 'm³', 'Cubic meter', 1000),
      u('in3', 'cubic_inch', 'in³', 'Cubic inch', 0.016387064, ['cu in']),
      u('ft3', 'cubic_foot', 'ft³', 'Cubic foot', 28.316846592, ['cu ft']),
      u('floz', 'fluid_ounce', 'fl oz', 'US fluid ounce', 0.0295735295625, ['fl. oz', 'fl.oz', 'fl oz']),
      u('pt', 'pint', 'pt', 'US pint', 0.473176473),
      u('qt', 'quart', 'qt', 'US quart', 0.946352946),
      u('gal', 'gallon', 'gal', 'US gallon', 3.785411784, ['gals']),
      u('impgal', 'imperial_gallon', 'imp gal', 'Imperial gallon', 4.54609),
    ],
  },
  {
    key: 'cooking',
    label: 'Cooking',
    base: 'milliliter',
    units: [
      u('tsp', 'teaspoon', 'tsp', 'Teaspoon', 4.92892159375, ['tsps']),
      u('tbsp', 'tablespoon', 'tbsp', 'Tablespoon', 14.78676478125, ['tbs', 'tbl', 'tbsps']),
      u('floz', 'fluid_ounce', 'fl oz', 'US fluid ounce', 29.5735295625, ['fl. oz', 'fl.oz', 'oz']),
      u('cup', 'cup', 'cup', 'US cup', 236.5882365, ['cups', 'c']),
      u('pt', 'pint', 'pt', 'US pint', 473.176473),
      u('qt', 'quart', 'qt', 'US quart', 946.352946),
      u('gal', 'gallon', 'gal', 'US gallon', 3785.411784),
      u('ml', 'milliliter', 'mL', 'Milliliter', 1, ['mls']),
      u('cl', 'centiliter', 'cL', 'Centiliter', 10),
      u('dl', 'deciliter', 'dL', 'Deciliter', 100),
      u('l', 'liter', 'L', 'Liter', 1000, ['ltr', 'lt']),
    ],
  },
  {
    key: 'area',
    label: 'Area',
    base: 'square_meter',
    units: [
      u('mm2', 'square_millimeter', 'mm²', 'Square millimeter', 1e-6, ['sq mm']),
      u('cm2', 'square_centimeter', 'cm²', 'Square centimeter', 1e-4, ['sq cm']),
      u('m2', 'square_meter', 'm²', 'Square meter', 1, ['sq m', 'sqm', 'sq. m']),
      u('km2', 'square_kilometer', 'km²', 'Square kilometer', 1e6, ['sq km', 'sqkm']),
      u('in2', 'square_inch', 'in²', 'Square inch', 0.00064516, ['sq in']),
      u('ft2', 'square_foot', 'ft²', 'Square foot', 0.09290304, ['sq ft', 'sqft', 'sq. ft']),
      u('yd2', 'square_yard', 'yd²', 'Square yard', 0.83612736, ['sq yd']),
      u('mi2', 'square_mile', 'mi²', 'Square mile', 2589988.110336, ['sq mi']),
      u('ha', 'hectare', 'ha', 'Hectare', 1e4),
      u('ac', 'acre', 'ac', 'Acre', 4046.8564224),
    ],
  },
  {
    key: 'speed',
    label: 'Speed',
    base: 'meter_per_second',
    units: [
      u('m/s', 'meter_per_second', 'm/s', 'Meter per second', 1, ['mps', 'm/sec']),
      u('km/h', 'kilometer_per_hour', 'km/h', 'Kilometer per hour', 1 / 3.6, ['kmh', 'kph', 'km/hr', 'kmph']),
      u('mph', 'mile_per_hour', 'mph', 'Mile per hour', 0.44704, ['mi/h', 'mi/hr']),
      u('ft/s', 'foot_per_second', 'ft/s', 'Foot per second', 0.3048, ['fps', 'ft/sec']),
      u('kn', 'knot', 'kn', 'Knot', 1852 / 3600, ['kt', 'kts']),
      u('mach', 'mach', 'Mach', 'Mach', 343),
    ],
  },
  {
    key: 'time',
    label: 'Time',
    base: 'second',
    units: [
      u('ns', 'nanosecond', 'ns', 'Nanosecond', 1e-9),
      u('us', 'microsecond', 'µs', 'Microsecond', 1e-6, ['μs']),
      u('ms', 'millisecond', 'ms', 'Millisecond', 1e-3),
      u('s', 'second', 's', 'Second', 1, ['sec', 'secs']),
      u('min', 'minute', 'min', 'Minute', 60, ['mins']),
      u('h', 'hour', 'h', 'Hour', 3600, ['hr', 'hrs']),
      u('d', 'day', 'd', 'Day', 86400),
      u('wk', 'week', 'wk', 'Week', 7 * 86400, ['wks']),
      u('mo', 'month', 'mo', 'Month', YEAR / 12, ['mos']),
      u('yr', 'year', 'yr', 'Year', YEAR, ['yrs']),
      u('decade', 'decade', 'decade', 'Decade', 10 * YEAR),
      u('century', 'century', 'century', 'Century', 100 * YEAR),
    ],
  },
  {
    key: 'data',
    label: 'Data size',
    base: 'byte',
    units: [
      u('bit', 'bit', 'bit', 'Bit', 1 / 8),
      u('kbit', 'kilobit', 'kbit', 'Kilobit', 125, ['kb/s']),
      u('Mbit', 'megabit', 'Mbit', 'Megabit', 125e3),
      u('Gbit', 'gigabit', 'Gbit', 'Gigabit', 125e6),
      u('B', 'byte', 'B', 'Byte', 1),
      u('KB', 'kilobyte', 'kB', 'Kilobyte', 1e3),
      u('MB', 'megabyte', 'MB', 'Megabyte', 1e6),
      u('GB', 'gigabyte', 'GB', 'Gigabyte', 1e9),
      u('TB', 'terabyte', 'TB', 'Terabyte', 1e12),
      u('PB', 'petabyte', 'PB', 'Petabyte', 1e15),
      u('KiB', 'kibibyte', 'KiB', 'Kibibyte', 1024),
      u('MiB', 'mebibyte', 'MiB', 'Mebibyte', 1024 ** 2),
      u('GiB', 'gibibyte', 'GiB', 'Gibibyte', 1024 ** 3),
      u('TiB', 'tebibyte', 'TiB', 'Tebibyte', 1024 ** 4),
    ],
  },
];
