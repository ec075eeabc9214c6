"""MySQL's language tailorings of its UCA 4.0.0 collations (`utf8mb4_swedish_ci`, ...), for
scripts/gen_collations.py.

RULES_400 holds MySQL's published tailoring rule strings (strings/ctype-uca.cc of
mysql/mysql-server: `german2`, `icelandic`, ..., `vietnamese`), copied as data. One rule set
serves a language's utf8mb3, utf8mb4, utf16 and utf32 collations.

How MySQL applies them to its primary-weight-only UCA 4.0.0 table (checked against Dolt for
every BMP code point of every language, see crates/format/tests/data/collations/README.md):
rules run in order; `&X` resets to X's current weights (a tailored X counts as tailored, an
expansion `&AE` to the concatenated weights of its letters, an ignorable X to the single weight
0); each `<` after the reset adds one to the last weight, `<<`, `<<<` and `=` keep it (the table
has one level). Every single code point named gets the result; contractions (`ch`, `ll`, `aa`,
`dž`, ...) take part in the counting but weigh no code point, since Dolt weighs code points one
at a time. A tailored weight may equal an existing one (MySQL does not make room).
"""

RULES_400 = {
    'german2': (
        r'&AE << \u00E6 <<< \u00C6 << \u00E4 <<< \u00C4 &OE << \u0153 <<< \u0152 << \u00F6 <<<'
        r' \u00D6 &UE << \u00FC <<< \u00DC '
    ),
    'icelandic': (
        r'& A < \u00E1 <<< \u00C1 & D < \u00F0 <<< \u00D0 & E < \u00E9 <<< \u00C9 & I < \u00ED'
        r' <<< \u00CD & O < \u00F3 <<< \u00D3 & U < \u00FA <<< \u00DA & Y < \u00FD <<< \u00DD '
        r'& Z < \u00FE <<< \u00DE < \u00E6 <<< \u00C6 << \u00E4 <<< \u00C4 < \u00F6 <<< \u00D6'
        r' << \u00F8 <<< \u00D8 < \u00E5 <<< \u00C5 '
    ),
    'latvian': (
        r'& C < \u010D <<< \u010C & G < \u0123 <<< \u0122 & I < \u0079 <<< \u0059 & K < \u0137'
        r' <<< \u0136 & L < \u013C <<< \u013B & N < \u0146 <<< \u0145 & R < \u0157 <<< \u0156 '
        r'& S < \u0161 <<< \u0160 & Z < \u017E <<< \u017D '
    ),
    'romanian': (
        r'& A < \u0103 <<< \u0102 < \u00E2 <<< \u00C2 & I < \u00EE <<< \u00CE & S < \u0219 <<<'
        r' \u0218 << \u015F <<< \u015E & T < \u021B <<< \u021A << \u0163 <<< \u0162 '
    ),
    'slovenian': (
        r'& C < \u010D <<< \u010C & S < \u0161 <<< \u0160 & Z < \u017E <<< \u017D '
    ),
    'polish': (
        r'& A < \u0105 <<< \u0104 & C < \u0107 <<< \u0106 & E < \u0119 <<< \u0118 & L < \u0142'
        r' <<< \u0141 & N < \u0144 <<< \u0143 & O < \u00F3 <<< \u00D3 & S < \u015B <<< \u015A '
        r'& Z < \u017A <<< \u0179 < \u017C <<< \u017B'
    ),
    'estonian': (
        r'& S < \u0161 <<< \u0160  < \u007A <<< \u005A  < \u017E <<< \u017D & W < \u00F5 <<< '
        r'\u00D5 < \u00E4 <<< \u00C4 < \u00F6 <<< \u00D6 < \u00FC <<< \u00DC '
    ),
    'spanish': (
        r'& N < \u00F1 <<< \u00D1 '
    ),
    'swedish': (
        r'& Y <<\u00FC <<< \u00DC & Z < \u00E5 <<< \u00C5 < \u00E4 <<< \u00C4 << \u00E6 <<< '
        r'\u00C6 < \u00F6 <<< \u00D6 << \u00F8 <<< \u00D8 '
    ),
    'turkish': (
        r'& C < \u00E7 <<< \u00C7 & G < \u011F <<< \u011E & H < \u0131 <<< \u0049 & O < \u00F6'
        r' <<< \u00D6 & S < \u015F <<< \u015E & U < \u00FC <<< \u00DC '
    ),
    'czech': (
        r'& C < \u010D <<< \u010C & H <      ch <<<      Ch <<< CH& R < \u0159 <<< \u0158& S <'
        r' \u0161 <<< \u0160& Z < \u017E <<< \u017D'
    ),
    'danish': (
        r'& Y << \u00FC <<< \u00DC << \u0171 <<< \u0170& Z  < \u00E6 <<< \u00C6 << \u00E4 <<< '
        r'\u00C4 < \u00F8 <<< \u00D8 << \u00F6 <<< \u00D6 << \u0151 <<< \u0150 < \u00E5 <<< '
        r'\u00C5 << aa <<<  Aa <<< AA'
    ),
    'lithuanian': (
        r'& C << ch <<< Ch <<< CH< \u010D <<< \u010C& E << \u0119 <<< \u0118 << \u0117 <<< '
        r'\u0116& I << y <<< Y& S  < \u0161 <<< \u0160& Z  < \u017E <<< \u017D'
    ),
    'slovak': (
        r'& A < \u00E4 <<< \u00C4& C < \u010D <<< \u010C& H < ch <<< Ch <<< CH& O < \u00F4 <<<'
        r' \u00D4& S < \u0161 <<< \u0160& Z < \u017E <<< \u017D'
    ),
    'spanish2': (
        r'&C <  ch <<< Ch <<< CH&L <  ll <<< Ll <<< LL&N < \u00F1 <<< \u00D1'
    ),
    'roman': (
        r'& I << j <<< J & V << u <<< U '
    ),
    'persian': (
        r'& \u066D < \u064E < \uFE76 < \uFE77 < \u0650 < \uFE7A < \uFE7B < \u064F < \uFE78 < '
        r'\uFE79 < \u064B < \uFE70 < \uFE71 < \u064D < \uFE74 < \u064C < \uFE72& \uFE7F < '
        r'\u0653 < \u0654 < \u0655 < \u0670& \u0669 < \u0622 < \u0627 < \u0671 < \u0621 < '
        r'\u0623 < \u0625 < \u0624 < \u0626& \u0642 < \u06A9 < \u0643& \u0648 < \u0647 < '
        r'\u0629 < \u06C0 < \u06CC < \u0649 < \u064A& \uFE80 < \uFE81 < \uFE82 < \uFE8D < '
        r'\uFE8E < \uFB50 < \uFB51 < \uFE80  & \uFE80 < \uFE83 < \uFE84 < \uFE87 < \uFE88 < '
        r'\uFE85 < \uFE86 < \u0689 < \u068A& \uFEAE < \uFDFC& \uFED8 < \uFB8E < \uFB8F < '
        r'\uFB90 < \uFB91 < \uFED9 < \uFEDA < \uFEDB < \uFEDC& \uFEEE < \uFEE9 < \uFEEA < '
        r'\uFEEB < \uFEEC < \uFE93 < \uFE94 < \uFBA4 < \uFBA5 < \uFBFC < \uFBFD < \uFBFE < '
        r'\uFBFF < \uFEEF < \uFEF0 < \uFEF1 < \uFEF2 < \uFEF3 < \uFEF4 < \uFEF5 < \uFEF6 < '
        r'\uFEF7 < \uFEF8 < \uFEF9 < \uFEFA < \uFEFB < \uFEFC'
    ),
    'esperanto': (
        r'& C < \u0109 <<< \u0108& G < \u011D <<< \u011C& H < \u0125 <<< \u0124& J < \u0135 '
        r'<<< \u0134& S < \u015d <<< \u015c& U < \u016d <<< \u016c'
    ),
    'hungarian': (
        r'&O < \u00F6 <<< \u00D6 << \u0151 <<< \u0150&U < \u00FC <<< \u00DC << \u0171 <<< '
        r'\u0170'
    ),
    'croatian': (
        r'&C < \u010D <<< \u010C < \u0107 <<< \u0106&D < d\u017E = \u01C6 <<< d\u017D <<< '
        r'D\u017E = \u01C5 <<< D\u017D = \u01C4   < \u0111 <<< \u0110&L < lj = \u01C9  <<< lJ '
        r'<<< Lj = \u01C8 <<< LJ = \u01C7&N < nj = \u01CC  <<< nJ <<< Nj = \u01CB <<< NJ = '
        r'\u01CA&S < \u0161 <<< \u0160&Z < \u017E <<< \u017D'
    ),
    'sinhala': (
        r'& \u0D96 < \u0D82 < \u0D83 < \u0D9A < \u0D9B < \u0D9C < \u0D9D< \u0D9E < \u0D9F < '
        r'\u0DA0 < \u0DA1 < \u0DA2 < \u0DA3< \u0DA5 < \u0DA4 < \u0DA6< \u0DA7 < \u0DA8 < '
        r'\u0DA9 < \u0DAA < \u0DAB < \u0DAC< \u0DAD < \u0DAE < \u0DAF < \u0DB0 < \u0DB1< '
        r'\u0DB3 < \u0DB4 < \u0DB5 < \u0DB6 < \u0DB7 < \u0DB8< \u0DB9 < \u0DBA < \u0DBB < '
        r'\u0DBD < \u0DC0 < \u0DC1< \u0DC2 < \u0DC3 < \u0DC4 < \u0DC5 < \u0DC6< \u0DCF< \u0DD0'
        r' < \u0DD1 < \u0DD2 < \u0DD3 < \u0DD4 < \u0DD6< \u0DD8 < \u0DF2 < \u0DDF < \u0DF3 < '
        r'\u0DD9 < \u0DDA< \u0DDB < \u0DDC < \u0DDD < \u0DDE < \u0DCA'
    ),
    'vietnamese': (
        r' &A << \u00E0 <<< \u00C0 << \u1EA3 <<< \u1EA2 << \u00E3 <<< \u00C3 << \u00E1 <<< '
        r'\u00C1 << \u1EA1 <<< \u1EA0  < \u0103 <<< \u0102 << \u1EB1 <<< \u1EB0 << \u1EB3 <<< '
        r'\u1EB2 << \u1EB5 <<< \u1EB4 << \u1EAF <<< \u1EAE << \u1EB7 <<< \u1EB6  < \u00E2 <<< '
        r'\u00C2 << \u1EA7 <<< \u1EA6 << \u1EA9 <<< \u1EA8 << \u1EAB <<< \u1EAA << \u1EA5 <<< '
        r'\u1EA4 << \u1EAD <<< \u1EAC &D  < \u0111 <<< \u0110 &E << \u00E8 <<< \u00C8 << '
        r'\u1EBB <<< \u1EBA << \u1EBD <<< \u1EBC << \u00E9 <<< \u00C9 << \u1EB9 <<< \u1EB8  < '
        r'\u00EA <<< \u00CA << \u1EC1 <<< \u1EC0 << \u1EC3 <<< \u1EC2 << \u1EC5 <<< \u1EC4 << '
        r'\u1EBF <<< \u1EBE << \u1EC7 <<< \u1EC6 &I << \u00EC <<< \u00CC << \u1EC9 <<< \u1EC8 '
        r'<< \u0129 <<< \u0128 << \u00ED <<< \u00CD << \u1ECB <<< \u1ECA &O << \u00F2 <<< '
        r'\u00D2 << \u1ECF <<< \u1ECE << \u00F5 <<< \u00D5 << \u00F3 <<< \u00D3 << \u1ECD <<< '
        r'\u1ECC  < \u00F4 <<< \u00D4 << \u1ED3 <<< \u1ED2 << \u1ED5 <<< \u1ED4 << \u1ED7 <<< '
        r'\u1ED6 << \u1ED1 <<< \u1ED0 << \u1ED9 <<< \u1ED8  < \u01A1 <<< \u01A0 << \u1EDD <<< '
        r'\u1EDC << \u1EDF <<< \u1EDE << \u1EE1 <<< \u1EE0 << \u1EDB <<< \u1EDA << \u1EE3 <<< '
        r'\u1EE2 &U << \u00F9 <<< \u00D9 << \u1EE7 <<< \u1EE6 << \u0169 <<< \u0168 << \u00FA '
        r'<<< \u00DA << \u1EE5 <<< \u1EE4  < \u01B0 <<< \u01AF << \u1EEB <<< \u1EEA << \u1EED '
        r'<<< \u1EEC << \u1EEF <<< \u1EEE << \u1EE9 <<< \u1EE8 << \u1EF1 <<< \u1EF0 &Y << '
        r'\u1EF3 <<< \u1EF2 << \u1EF7 <<< \u1EF6 << \u1EF9 <<< \u1EF8 << \u00FD <<< \u00DD << '
        r'\u1EF5 <<< \u1EF4'
    ),
}


# MySQL's UCA 9.0.0 tailorings (strings/ctype-uca.cc: `de_pb_cldr_30`, `is_cldr_30`, ...,
# from CLDR 30), by the language part of the collation name (utf8mb4_<lang>_0900_ai_ci and
# _as_cs). es, la and eo use the UCA 4.0.0 rule strings spanish, roman and esperanto.
RULES_900 = {
    'de_pb': (
        r'&AE << \u00E4 <<< \u00C4 &OE << \u00F6 <<< \u00D6 &UE << \u00FC <<< \u00DC '
    ),
    'is': (
        r'&[before 1]b       <  \u00E1 <<< \u00C1 &          d       << \u0111 <<< \u0110 < '
        r'\u00F0 <<< \u00D0 &[before 1]f       <  \u00E9 <<< \u00C9 &[before 1]j       <  '
        r'\u00ED <<< \u00CD &[before 1]p       <  \u00F3 <<< \u00D3 &[before 1]v       <  '
        r'\u00FA <<< \u00DA &[before 1]z       <  \u00FD <<< \u00DD &[before 1]\u01C0 <  '
        r'\u00E6 <<< \u00C6 << \u00E4 <<< \u00C4 <  \u00F6 <<< \u00D6 << \u00F8 <<< \u00D8 <  '
        r'\u00E5 <<< \u00C5'
    ),
    'ro': (
        r'&A < \u0103 <<< \u0102 <   \u00E2 <<< \u00C2 &I < \u00EE <<< \u00CE &S < \u015F =   '
        r'\u0219 <<< \u015E =   \u0218 &T < \u0163 =   \u021B <<< \u0162 =   \u021A'
    ),
    'sl': (
        r'&C < \u010D <<< \u010C < \u0107 <<< \u0106 &D < \u0111 <<< \u0110 &S < \u0161 <<< '
        r'\u0160 &Z < \u017E <<< \u017D'
    ),
    'pl': (
        r'&A < \u0105 <<< \u0104 &C < \u0107 <<< \u0106 &E < \u0119 <<< \u0118 &L < \u0142 <<<'
        r' \u0141 &N < \u0144 <<< \u0143 &O < \u00F3 <<< \u00D3 &S < \u015B <<< \u015A &Z < '
        r'\u017A <<< \u0179 < \u017C <<< \u017B'
    ),
    'et': (
        r'&[before 1]T <   \u0161 <<< \u0160 < z         <<< Z <   \u017E <<< \u017D &[before '
        r'1]X <   \u00F5 <<< \u00D5 <   \u00E4 <<< \u00C4 <   \u00F6 <<< \u00D6 <   \u00FC <<<'
        r' \u00DC'
    ),
    'sv': (
        r'&          D       <<  \u0111   <<< \u0110 <<  \u00F0 <<< \u00D0 &          t       '
        r'<<< \u00FE/h &          T       <<< \u00DE/H &          Y       <<  \u00FC   <<< '
        r'\u00DC <<  \u0171 <<< \u0170 &[before 1]\u01C0 <   \u00E5   <<< \u00C5 <   \u00E4 '
        r'<<< \u00C4 << \u00E6   <<< \u00C6 <<  \u0119 <<< \u0118 <  \u00F6   <<< \u00D6 <<  '
        r'\u00F8 <<< \u00D8 << \u0151   <<< \u0150 <<  \u0153 <<< \u0152 << \u00F4   <<< '
        r'\u00D4'
    ),
    'tr': (
        r'&          C <   \u00E7 <<< \u00C7 &          G <   \u011F <<< \u011E &[before 1]i <'
        r'   \u0131 <<< I &          i <<< \u0130 &          O <   \u00F6 <<< \u00D6 &'
        r'          S <   \u015F <<< \u015E &          U <   \u00FC <<< \u00DC '
    ),
    'cs': (
        r'&C < \u010D <<< \u010C &H < ch      <<< cH       <<< Ch <<< CH &R < \u0159 <<< '
        r'\u0158&S < \u0161 <<< \u0160&Z < \u017E <<< \u017D'
    ),
    'da': (
        r'&          D       <<  \u0111   <<< \u0110 <<  \u00F0 <<< \u00D0 &          t       '
        r'<<< \u00FE/h &          T       <<< \u00DE/H &          Y       <<  \u00FC   <<< '
        r'\u00DC <<  \u0171 <<< \u0170 &[before 1]\u01C0 <   \u00E6   <<< \u00C6 <<  \u00E4 '
        r'<<< \u00C4 <   \u00F8   <<< \u00D8 <<  \u00F6 <<< \u00D6 <<  \u0151   <<< \u0150 <<'
        r'  \u0153 <<< \u0152 <   \u00E5   <<< \u00C5 <<< aa      <<< Aa <<< AA'
    ),
    'lt': (
        r'&\u0300 = \u0307\u0300 &\u0301 = \u0307\u0301 &\u0303 = \u0307\u0303 &A << \u0105 '
        r'<<< \u0104 &C <  \u010D <<< \u010C &E << \u0119 <<< \u0118 << \u0117 <<< \u0116&I <<'
        r' \u012F <<< \u012E << y       <<< Y &S <  \u0161 <<< \u0160 &U << \u0173 <<< \u0172 '
        r'<< \u016B <<< \u016A &Z <  \u017E <<< \u017D'
    ),
    'sk': (
        r'&A < \u00E4 <<< \u00C4 &C < \u010D <<< \u010C &H < ch      <<< cH      <<< Ch <<< CH'
        r' &O < \u00F4 <<< \u00D4 &R < \u0159 <<< \u0158 &S < \u0161 <<< \u0160 &Z < \u017E '
        r'<<< \u017D'
    ),
    'es_trad': (
        r'&N <  \u00F1 <<< \u00D1 &C <  ch      <<< Ch      <<< CH &l <  ll      <<< Ll      '
        r'<<< LL'
    ),
    'hu': (
        r'&C  <   cs      <<< Cs      <<< CS &D  <   dz      <<< Dz      <<< DZ &DZ <   dzs'
        r'     <<< Dzs     <<< DZS &G  <   gy      <<< Gy      <<< GY &L  <   ly      <<< Ly'
        r'      <<< LY &N  <   ny      <<< Ny      <<< NY &S  <   sz      <<< Sz      <<< SZ '
        r'&T  <   ty      <<< Ty      <<< TY &Z  <   zs      <<< Zs      <<< ZS &O  <   \u00F6'
        r' <<< \u00D6 <<  \u0151 <<< \u0150 &U  <   \u00FC <<< \u00DC <<  \u0171 <<< \u0170 '
        r'&cs <<< ccs/cs &Cs <<< Ccs/cs &CS <<< CCS/CS &dz <<< ddz/dz &Dz <<< Ddz/dz &DZ <<< '
        r'DDZ/DZ &dzs<<< ddzs/dzs &Dzs<<< Ddzs/dzs &DZS<<< DDZS/DZS &gy <<< ggy/gy &Gy <<< '
        r'Ggy/gy &GY <<< GGY/GY &ly <<< lly/ly &Ly <<< Lly/ly &LY <<< LLY/LY &ny <<< nny/ny '
        r'&Ny <<< Nny/ny &NY <<< NNY/NY &sz <<< ssz/sz &Sz <<< Ssz/sz &SZ <<< SSZ/SZ &ty <<< '
        r'tty/ty &Ty <<< Tty/ty &TY <<< TTY/TY &zs <<< zzs/zs &Zs <<< Zzs/zs &ZS <<< ZZS/ZS'
    ),
    'hr': (
        r'&C <   \u010D  <<< \u010C <   \u0107  <<< \u0106 &D <   d\u017E <<< \u01C6 <<< '
        r'D\u017E <<< \u01C5 <<< D\u017D <<< \u01C4  <   \u0111 <<< \u0110 &L <   lj       <<<'
        r' \u01C9 <<< Lj       <<< \u01C8 <<< LJ <<< \u01C7 &N <   nj       <<< \u01CC <<< Nj'
        r'       <<< \u01CB <<< NJ <<< \u01CA &S <   \u0161  <<< \u0160 &Z <   \u017E  <<< '
        r'\u017D '
    ),
    'vi': (
        r'&\u0300 << \u0309 <<  \u0303 << \u0301 <<  \u0323 &a       < \u0103 <<< \u0102 <  '
        r'\u00E2 <<< \u00C2 &d       < \u0111 <<< \u0110 &e       < \u00EA <<< \u00CA &o'
        r'       < \u00F4 <<< \u00D4 <  \u01A1 <<< \u01A0 &u       < \u01B0 <<< \u01AF'
    ),
    'lv': (
        r'&[before 1]D       <  \u010D <<< \u010C &[before 1]H       <  \u0123 <<< \u0122 &'
        r'          I       << y       <<< Y &[before 1]L       <  \u0137 <<< \u0136 &[before '
        r'1]M       <  \u013C <<< \u013B &[before 1]O       <  \u0146 <<< \u0145 &[before 1]S'
        r'       <  \u0157 <<< \u0156 &[before 1]T       <  \u0161 <<< \u0160 &[before '
        r'1]\u01B7 <  \u017E <<< \u017D'
    ),
}
RULES_900["es"] = RULES_400["spanish"]
RULES_900["la"] = RULES_400["roman"]
RULES_900["eo"] = RULES_400["esperanto"]


def tokens(text):
    """Rule text -> tokens: '&', '<', '<<', '<<<', '=', '/', '[before N]', or a string (its
    \\uXXXX escapes decoded)."""
    out = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch in "&=/":
            out.append(ch)
            i += 1
        elif ch == "<":
            j = i
            while j < len(text) and text[j] == "<" and j - i < 3:
                j += 1
            out.append(text[i:j])
            i = j
        elif ch == "[":
            j = text.index("]", i)
            out.append(text[i:j + 1])
            i = j + 1
        else:
            s = []
            while i < len(text) and not text[i].isspace() and text[i] not in "&<=/[":
                if text.startswith("\\u", i):
                    s.append(chr(int(text[i + 2:i + 6], 16)))
                    i += 6
                else:
                    s.append(text[i])
                    i += 1
            out.append("".join(s))
    return out


def parse(text):
    """Rule text -> [(reset string, [(operator, string)])]."""
    toks = tokens(text)
    rules = []
    i = 0
    while i < len(toks):
        if toks[i] != "&":
            raise ValueError("rule does not start with a reset: %r" % toks[i:i + 3])
        reset = toks[i + 1]
        i += 2
        items = []
        while i < len(toks) and toks[i] != "&":
            items.append((toks[i], toks[i + 1]))
            i += 2
        rules.append((reset, items))
    return rules


def tailor400(primaries, text):
    """The tailored primary weights: {code point: [weights]} for every code point the rules
    name, given `primaries(cp)`, the untailored primary weights of a code point."""
    tailored = {}

    def current(cp):
        return tailored[cp] if cp in tailored else primaries(cp)
    for reset, items in parse(text):
        base = [w for c in reset for w in current(ord(c))]
        diff = 0
        for op, s in items:
            if op == "<":
                diff += 1
            if len(s) != 1:
                continue  # a contraction: weighs no single code point
            w = list(base) or [0]
            w[-1] += diff
            tailored[ord(s)] = w
    return tailored


# The extra collation element MySQL appends to a UCA 9.0.0 tailored weight: one above the
# largest primary, secondary and tertiary weight of DUCET 9.0.0.
EXTRA_CE = (0x54A4, 0x0115, 0x0020)


def parse900(text):
    """Rule text -> [(reset, before level or 0, [(operator, string, extension)])]; `x/y`
    (extension) tailors x as if the reset were followed by y."""
    toks = tokens(text)
    rules = []
    i = 0
    while i < len(toks):
        if toks[i] != "&":
            raise ValueError("rule does not start with a reset: %r" % toks[i:i + 3])
        i += 1
        before = 0
        if toks[i].startswith("[before"):
            before = int(toks[i][len("[before"):-1])
            i += 1
        reset = toks[i]
        i += 1
        items = []
        while i < len(toks) and toks[i] != "&":
            op, s = toks[i], toks[i + 1]
            i += 2
            ext = ""
            if i < len(toks) and toks[i] == "/":
                ext = toks[i + 1]
                i += 2
            items.append((op, s, ext))
        rules.append((reset, before, items))
    return rules


LEVEL = {"<": 1, "<<": 2, "<<<": 3, "=": 0}


def tailor900(elements, text):
    """MySQL's UCA 9.0.0 tailoring: {code point: [(p, s, t), ...]} for the code points the
    rules name, given `elements(cp)`, a code point's DUCET collation elements.

    Rules run in order. A reset's weights are its current ones (tailored code points and
    contractions count as tailored; a multi-letter reset takes the longest known contraction
    first). Each operator counts a difference per level (`<` adds one primary and clears the
    lower levels, `<<` one secondary and clears the tertiary, `<<<` one tertiary, `=` nothing);
    when any is non-zero the string gets the reset's weights plus one extra element, EXTRA_CE
    plus the differences at the levels that differ (0 elsewhere). `[before N]` then lowers the
    last non-zero level-N weight before the extra element by one. At most 8 elements are kept.
    """
    cur = {}

    def weights(base):
        out = []
        i = 0
        while i < len(base):
            for n in range(len(base) - i, 1, -1):
                if base[i:i + n] in cur:
                    out += cur[base[i:i + n]]
                    i += n
                    break
            else:
                c = base[i]
                out += cur[c] if c in cur else [tuple(ce) for ce in elements(ord(c))]
                i += 1
        return out
    for reset, before, items in parse900(text):
        diff = [0, 0, 0]
        for op, s, ext in items:
            level = LEVEL[op]
            if level:
                diff[level - 1] += 1
                for k in range(level, 3):
                    diff[k] = 0
            w = [list(ce) for ce in weights(reset + ext)]
            if any(diff):
                w.append([EXTRA_CE[k] + diff[k] if diff[k] else 0 for k in range(3)])
            w = w[:8]
            if before:
                for ce in reversed(w[:-1]):
                    if ce[before - 1]:
                        ce[before - 1] -= 1
                        break
                else:
                    raise ValueError("[before %d] on an ignorable reset %r" % (before, reset))
            cur[s] = [tuple(ce) for ce in w]
    return {ord(k): v for k, v in cur.items() if len(k) == 1}


def canonical_closure(tailored, table):
    """The code points of `table` (DUCET entries) that MySQL moves along with the tailored
    ones: one whose canonical decomposition is equivalent to a tailored code point's plus
    further combining marks (Ǖ = Ü + macron, Ḉ = ć + cedilla, Ì = a tailored I + grave)
    weighs as that code point followed by the marks' elements; the tailored code point
    consuming the most marks wins. A mark that is tailored itself (vi tailors the tone marks)
    weighs as tailored, and a code point whose decomposition holds a tailored code point but
    starts with none (ã = a + a tailored tilde, U+0341 = a tailored U+0301) weighs as its
    decomposition's code points one after another. Returns {code point: elements}."""
    import unicodedata

    def nfd(s):
        return unicodedata.normalize("NFD", s)

    def weights(c):
        return list(tailored[ord(c)]) if ord(c) in tailored else [tuple(ce) for ce in table[ord(c)]]
    by_base = {}
    for c in tailored:
        t = nfd(chr(c))
        by_base.setdefault(t[0], []).append((c, t))
    out = {}
    for cp in sorted(table):
        if cp in tailored:
            continue
        s = nfd(chr(cp))
        if s == chr(cp):
            continue
        best = None
        for c, t in sorted(by_base.get(s[0], [])):
            rest = list(s[1:])
            if not all(m in rest and not rest.remove(m) for m in t[1:]):
                continue
            if nfd(t + "".join(rest)) != s:
                continue
            if best is None or len(t) > len(best[1]):
                best = (c, t, rest)
        if best:
            c, _, rest = best
            out[cp] = list(tailored[c]) + [ce for m in rest for ce in weights(m)]
        elif any(ord(x) in tailored for x in s):
            out[cp] = [ce for x in s for ce in weights(x)]
    return out


# Tailorings that sort upper case first (CLDR's [caseFirst upper], MySQL's CASE_FIRST_UPPER),
# which MySQL applies at the tertiary level (the _as_cs collation).
CASE_FIRST_UPPER = {"da"}

# DUCET tertiary weights MySQL counts as upper case (upper-case letters 0x08..0x0C, normal-size
# kana 0x0E/0x11/0x12, upper-case super/subscripts and squared letters 0x1D); checked against
# Dolt: with upper case first these sort before every other tertiary weight.
UPPER_TERTIARY = set(range(0x08, 0x0D)) | {0x0E, 0x11, 0x12, 0x1D}


def upper_first(ces):
    """Collation elements with upper case first: non-upper tertiary weights move above all
    upper ones (order kept within each group)."""
    return [(p, s, t if t == 0 or t in UPPER_TERTIARY else t + 0x100) for p, s, t in ces]


def recase(tailored):
    """With upper case first MySQL gives a tailored code point the case of its own letter:
    the elements it takes over from its reset (`&D << đ <<< Đ` copies D's upper-case
    tertiary) turn lower case for a lower-case letter and upper case for an upper-case one,
    so that Đ sorts right before đ."""
    out = {}
    for cp, ces in tailored.items():
        c = chr(cp)
        if c.upper() != c:
            ces = [(p, s, t - 6 if 0x08 <= t <= 0x0C else t) for p, s, t in ces]
        elif c.lower() != c:
            ces = [(p, s, t + 6 if 0x02 <= t <= 0x06 else t) for p, s, t in ces]
        out[cp] = ces
    return out
